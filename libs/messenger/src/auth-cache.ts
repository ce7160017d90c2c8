import { LRUCache } from 'lru-cache';

/**
 * The process-wide, size-bounded cache of decoded Signal keys for every socket of the process
 * (least recently used out first). Before it, each socket kept every key it ever read or wrote:
 * 7–9 KiB of heap per contact, never released. A miss is read (and opened) from Redis again, so
 * eviction costs a round trip, never correctness: the lease holder is the only writer, and a value
 * whose write is still in flight is kept aside (see `loadAuthState`) until Redis has it.
 *
 * Sizes are the sealed bytes as stored in Redis (a fair proxy of the decoded object's heap);
 * `null` (known absent) counts a few bytes.
 */
export interface AuthCacheStats {
  hits(n: number): void;
  misses(n: number): void;
  evicted(): void;
  size(bytes: number): void;
}

export const DEFAULT_AUTH_CACHE_MAX_BYTES = 64 * 1024 * 1024;
const NULL_SIZE = 16;

interface Entry {
  value: unknown;
  /**
   * Loaded by a warm-up (`AuthCacheScope.set` with `warmed`) and not looked up since: the first
   * lookup counts the miss the warm-up spared it, so warming ahead moves no hit or miss count.
   */
  warmed?: boolean;
}

let stats: AuthCacheStats | undefined;
let cache = create(DEFAULT_AUTH_CACHE_MAX_BYTES);
let nextScope = 1;
/** Prefixes of released scopes whose entries the next sweep drops. */
const released = new Set<string>();
let sweep: NodeJS.Timeout | undefined;
const SWEEP_DELAY_MS = 1000;

/**
 * Drops the entries of every scope released since the last sweep, in one pass over the cache: a
 * sender handing over hundreds of devices at once pays one pass, not one per device.
 */
function sweepReleased(): void {
  sweep = undefined;
  const dead = new Set(released);
  released.clear();
  const drop: string[] = [];
  for (const key of cache.keys()) if (dead.has(key.slice(0, key.indexOf('\u0000') + 1))) drop.push(key);
  for (const key of drop) cache.delete(key);
  stats?.size(cache.calculatedSize);
}

function create(maxBytes: number): LRUCache<string, Entry> {
  return new LRUCache<string, Entry>({
    maxSize: maxBytes,
    // lru-cache wants a size for every entry; set() always passes one.
    sizeCalculation: () => NULL_SIZE,
    dispose: (_v, _k, reason) => {
      if (reason === 'evict') stats?.evicted();
    },
  });
}

/** Sets the cache's bound (AUTH_CACHE_MAX_MB) and where its hits, misses and evictions are counted. */
export function configureAuthCache(opts: { maxBytes?: number; stats?: AuthCacheStats }): void {
  if (opts.maxBytes !== undefined && opts.maxBytes !== cache.maxSize) cache = create(opts.maxBytes);
  stats = opts.stats;
}

/**
 * One auth state's view of the cache. Each `loadAuthState` gets a scope of its own, so a device
 * linked again (new keys) never sees what an earlier socket of the same id cached.
 */
export class AuthCacheScope {
  private readonly prefix = `${nextScope++}\u0000`;
  private gone = false;

  /** The cached value (`null` = known absent), or undefined on a miss. */
  get(type: string, id: string): unknown {
    const e = cache.get(`${this.prefix}${type}\u0000${id}`);
    return e?.value;
  }

  has(type: string, id: string): boolean {
    return cache.has(`${this.prefix}${type}\u0000${id}`);
  }

  /** Caches a value; `warmed`: read ahead of its lookup (see `Entry.warmed`). */
  set(type: string, id: string, value: unknown, sealedBytes: number, warmed = false): void {
    if (this.gone) return;
    const entry: Entry = warmed ? { value, warmed } : { value };
    cache.set(`${this.prefix}${type}\u0000${id}`, entry, { size: Math.max(NULL_SIZE, sealedBytes) });
    stats?.size(cache.calculatedSize);
  }

  /**
   * Whether a lookup of a cached entry counts as a hit: not the first one after a warm-up loaded
   * it (without the warm-up that lookup would have read Redis), every one after.
   */
  lookupHits(type: string, id: string): boolean {
    const e = cache.peek(`${this.prefix}${type}\u0000${id}`);
    if (!e?.warmed) return true;
    e.warmed = false;
    return false;
  }

  delete(type: string, id: string): void {
    cache.delete(`${this.prefix}${type}\u0000${id}`);
  }

  /**
   * The socket using this scope is gone (the device stopped, moved to another sender or logged
   * out): its entries leave the cache at the next sweep instead of waiting to be the least recently
   * used, and it caches nothing more. A later socket of the device gets a scope of its own.
   */
  release(): void {
    if (this.gone) return;
    this.gone = true;
    released.add(this.prefix);
    sweep ??= setTimeout(sweepReleased, SWEEP_DELAY_MS).unref();
  }

  count(hits: number, misses: number): void {
    if (hits > 0) stats?.hits(hits);
    if (misses > 0) stats?.misses(misses);
  }
}

/** Bytes the cache holds now (sealed sizes), for tests and the gauge. */
export function authCacheBytes(): number {
  return cache.calculatedSize;
}
