import type { Logger, RedisClient, Subscription } from '@mgw/common';
import { startInvalidations } from './invalidations.js';
import { DEFAULT_WORKSPACE, keys } from '@mgw/contracts';
import type { PoolStore, WorkspaceRecord, WorkspaceStore } from '@mgw/store';

/** A cached answer and until when it is fresh (ms since the epoch). */
interface Entry<T> {
  value: T;
  until: number;
}

/**
 * The workspaces' records, remembered so that a request does not pay a Redis round trip to learn
 * whether its workspace is suspended (docs/workspaces.md). A change is published on
 * `keys.workspacesChannel()` (WorkspaceStore.update) and drops the record here at once; while this
 * process is not subscribed the cache is not used, as the token cache does (token-cache.ts). Who
 * owns a device is remembered the same way: a device given to a workspace is published on the same
 * channel (WorkspaceStore.addDevice), so a send's quota check pays no round trip to learn it; and
 * whose a pool is (a pool created or deleted is published there too: PoolStore), for a pool token's
 * request and the console's scope (docs/workspaces.md "The console").
 */
export class WorkspaceCache {
  private readonly entries = new Map<string, Entry<WorkspaceRecord | undefined>>();
  private readonly owners = new Map<string, Entry<string>>();
  private readonly poolOwners = new Map<string, Entry<string | undefined>>();
  private subscription?: Subscription;
  /** Bumped by every change heard: a lookup that overlapped one is not cached. */
  private changes = 0;

  constructor(
    private readonly store: Pick<WorkspaceStore, 'get' | 'workspaceOf'>,
    private readonly subscriber: RedisClient,
    private readonly logger: Logger,
    /** Whose a pool is (PoolStore.workspaceOf); absent: every pool is default's. */
    private readonly pools?: Pick<PoolStore, 'workspaceOf'>,
    private readonly opts: { ttlMs: number; maxEntries: number } = { ttlMs: 30_000, maxEntries: 10_000 },
  ) {}

  async start(): Promise<void> {
    this.subscription = await startInvalidations({
      subscriber: this.subscriber,
      channel: keys.workspacesChannel(),
      // A workspace's id, a device's or a pool's: ids of each kind are slugs, so every map drops it.
      drop: (id) => {
        this.changes++;
        this.entries.delete(id);
        this.owners.delete(id);
        this.poolOwners.delete(id);
      },
      dropAll: () => {
        this.changes++;
        this.entries.clear();
        this.owners.clear();
        this.poolOwners.clear();
      },
      logger: this.logger,
    });
  }

  async stop(): Promise<void> {
    await this.subscription?.stop();
  }

  /** A workspace's record (undefined: no such workspace), from the cache while subscribed. */
  get(id: string, now = Date.now()): Promise<WorkspaceRecord | undefined> {
    return this.cached(this.entries, id, () => this.store.get(id), now);
  }

  /** The workspace that owns a device (`default` when no workspace names it), cached while subscribed. */
  ownerOf(deviceId: string, now = Date.now()): Promise<string> {
    return this.cached(this.owners, deviceId, () => this.store.workspaceOf(deviceId), now);
  }

  /** The workspace a pool belongs to (undefined: no such pool), cached while subscribed. */
  async poolOwner(poolId: string, now = Date.now()): Promise<string | undefined> {
    const pools = this.pools;
    if (!pools) return DEFAULT_WORKSPACE;
    return this.cached(this.poolOwners, poolId, () => pools.workspaceOf(poolId), now);
  }

  /**
   * `map`'s entry for `id` while it is fresh and the invalidations are subscribed; else `load`'s
   * answer, kept for `ttlMs` unless a change was heard while it was read (it may predate it). A
   * full map is emptied rather than grown: its size is bounded whatever ids are asked for.
   */
  private async cached<T>(
    map: Map<string, Entry<T>>,
    id: string,
    load: () => Promise<T>,
    now: number,
  ): Promise<T> {
    const subscribed = this.subscription?.subscribed ?? false;
    const hit = subscribed ? map.get(id) : undefined;
    if (hit && hit.until > now) return hit.value;
    const before = this.changes;
    const value = await load();
    if (subscribed && before === this.changes) {
      if (map.size >= this.opts.maxEntries) map.clear();
      map.set(id, { value, until: now + this.opts.ttlMs });
    }
    return value;
  }
}
