import { masterNodes, type RedisClient } from '@mgw/common';
import {
  BufferJSON,
  initAuthCreds,
  proto,
  type AuthenticationCreds,
  type AuthenticationState,
  type SignalDataSet,
  type SignalKeyStore,
  type SignalDataTypeMap,
} from '@whiskeysockets/baileys';
import { DEVICE_ID_PATTERN, keys } from '@mgw/contracts';
import { storageContext, type Encryption } from '@mgw/store';
import { AuthCacheScope } from './auth-cache.js';
import { decodeAuthValue, encodeAuthValue } from './auth-codec.js';
import { messengerScript } from './lua.js';

/**
 * Baileys credentials and Signal keys in Redis (`keys.authCreds`, one hash per key type under
 * `keys.authKeys`), behind a write-through cache bounded per process (see auth-cache.ts): the
 * lease holder is the only writer, so what it wrote is what Redis holds, a send to a known
 * contact never waits on a Redis read, and an evicted key is read from Redis again.
 *
 * Every write is fenced by the device lease epoch: a process that lost the lease (paused, then
 * resumed after a failover) cannot roll the Signal ratchet back with stale keys ("Bad MAC").
 *
 * Every value is sealed (the account's private keys are in there) under the Redis key, plus the
 * field for a Signal key, as context: a value moved to another device or key id does not open.
 * A Signal key is written compact before it is sealed (auth-codec.ts); the JSON of earlier
 * releases is still read.
 * Legacy plaintext (from before encryption) is read as is and sealed on its next write.
 */
export class FencedWriteError extends Error {
  override name = 'FencedWriteError';
  constructor(deviceId: string) {
    super(`auth state write refused for device ${deviceId}: the lease is held by a newer owner`);
  }
}

/**
 * Not fenced: the writer's lease TTL ran out while it was slow and nobody holds the device. Its
 * renew loop re-acquires at once (epoch + 1: the same owner goes on) or gives the device up, so
 * the write may be retried; it is never applied without a lease.
 */
export class LeaseMissingError extends Error {
  override name = 'LeaseMissingError';
  constructor(deviceId: string) {
    super(`auth state write not applied for device ${deviceId}: the lease is missing (expired)`);
  }
}

/**
 * Applies the ops only while the writer's epoch holds the lease (see `lua/auth-fenced-write-n.lua`).
 * Returns 1 applied, 0 fenced (another epoch holds the lease), -1 the lease is missing.
 */
const FENCED = messengerScript<number>('auth-fenced-write-n');

type Op =
  [number, 'hset', string, string] | [number, 'hdel', string] | [number, 'set', string] | [number, 'del'];

export interface AuthStateOptions {
  redis: RedisClient;
  encryption: Encryption;
  deviceId: string;
  /** The lease epoch this process holds for the device, or undefined when it holds none. */
  epoch: () => number | undefined;
  /** Called once when a write is refused because the lease moved on. */
  onFenced?: () => void;
  /**
   * How long a write waits for the lease to be re-acquired when it is missing (expired) before it
   * fails with LeaseMissingError; longer than the renew interval so the renew loop gets a turn.
   */
  missingLeaseWaitMs?: number;
  /**
   * Phone <-> LID pairs Baileys stored (its `lid-mapping` keys: from usync answers, message
   * attributes, notifications and app-state sync), once written.
   */
  onLidMapping?: (pairs: { phone: string; lid: string }[]) => void;
}

/** Baileys' key store, and reads ahead of lookups that count no cache hit or miss. */
export type WarmableKeyStore = SignalKeyStore & { warm(type: string, ids: string[]): Promise<void> };

export interface RedisAuthState {
  state: AuthenticationState & { keys: WarmableKeyStore };
  /** Persists `state.creds` (call on every `creds.update`). */
  saveCreds: () => Promise<void>;
  /** True when the stored credentials belong to a registered (linked) account. */
  readonly registered: boolean;
  /** The socket is gone for good: its cached keys leave the process's cache (reads still work). */
  release: () => void;
}

/**
 * Key types written to Redis but not kept in the cache when written: one-time pre-keys. An account
 * uploads a batch of them (PRE_KEYS_WANTED, socket.ts; Baileys' default was 812) and WhatsApp
 * hands each out once, to a contact starting a session, which the account then reads (one miss)
 * and deletes. Kept on write (812 each) they made ~35 MiB of heap per 100 freshly linked devices
 * in a sender and crowded the sessions out of the cache's bound.
 */
const UNCACHED_WRITES: ReadonlySet<string> = new Set(['pre-key']);

const DEFAULT_MISSING_LEASE_WAIT_MS = 6_000;
const MISSING_LEASE_POLL_MS = 200;

const serialize = (value: unknown) => JSON.stringify(value, BufferJSON.replacer);
const deserialize = (raw: string): unknown => JSON.parse(raw, BufferJSON.reviver);

function readCreds(enc: Encryption, deviceId: string, raw: string): AuthenticationCreds {
  const key = keys.authCreds(deviceId);
  return deserialize(enc.openText(raw, storageContext(key))) as AuthenticationCreds;
}

/** The credentials as stored: sealed under their key (the account's private keys are in there). */
function sealCreds(enc: Encryption, deviceId: string, creds: AuthenticationCreds): string {
  return enc.sealText(serialize(creds), storageContext(keys.authCreds(deviceId)));
}

/** Runs `ops` against `targets` only while `epoch` is the device's current lease epoch. */
export type FencedWriteOutcome = 'applied' | 'fenced' | 'missing';

export async function fencedWrite(
  redis: RedisClient,
  deviceId: string,
  epoch: number,
  targets: string[],
  ops: Op[],
): Promise<FencedWriteOutcome> {
  if (ops.length === 0) return 'applied';
  // By its SHA (EVALSHA): a session write per message need not carry the script's text.
  const applied = await FENCED.run(
    redis,
    [keys.lease(deviceId), ...targets],
    [String(epoch), JSON.stringify(ops)],
  );
  return applied === 1 ? 'applied' : applied === -1 ? 'missing' : 'fenced';
}

export async function loadAuthState(opts: AuthStateOptions): Promise<RedisAuthState> {
  const { redis, deviceId, encryption: enc } = opts;
  const credsKey = keys.authCreds(deviceId);
  const rawCreds = await redis.get(credsKey);
  const creds = rawCreds ? readCreds(enc, deviceId, rawCreds) : initAuthCreds();
  // null means "known to be absent" so a miss is not asked for twice.
  const cache = new AuthCacheScope();
  // Values whose write is in flight (type -> id -> value): an eviction meanwhile must not let a
  // read fetch the older value Redis still holds.
  const pending = new Map<string, Map<string, unknown>>();
  let fenced = false;

  const fence = () => {
    if (!fenced) {
      fenced = true;
      opts.onFenced?.();
    }
    return new FencedWriteError(deviceId);
  };
  const write = async (targets: string[], ops: Op[]) => {
    const waitUntil = Date.now() + (opts.missingLeaseWaitMs ?? DEFAULT_MISSING_LEASE_WAIT_MS);
    for (;;) {
      const epoch = opts.epoch();
      if (epoch === undefined || fenced) throw fence();
      const outcome = await fencedWrite(redis, deviceId, epoch, targets, ops);
      if (outcome === 'applied') return;
      // Another epoch holds the lease. When it is this process's own newer lease (re-acquired
      // while the write was on its way) the write goes again under it; only another owner's
      // lease fences for good. A missing lease (our TTL ran out while we were slow) is restored
      // by the renewer: wait for it, re-reading the epoch.
      if (outcome === 'fenced') {
        const now = opts.epoch();
        if (now !== undefined && now > epoch) continue;
        throw fence();
      }
      if (Date.now() >= waitUntil) throw new LeaseMissingError(deviceId);
      await new Promise((r) => setTimeout(r, MISSING_LEASE_POLL_MS));
    }
  };

  const withPending = async (data: Map<string, Map<string, unknown>>, run: () => Promise<void>) => {
    for (const [type, values] of data) {
      let m = pending.get(type);
      if (!m) pending.set(type, (m = new Map()));
      for (const [id, v] of values) m.set(id, v);
    }
    try {
      await run();
    } finally {
      // Only our own entries: a later write of the same key may have replaced them meanwhile.
      for (const [type, values] of data) {
        const m = pending.get(type)!;
        for (const [id, v] of values) if (m.get(id) === v) m.delete(id);
        if (m.size === 0) pending.delete(type);
      }
    }
  };

  /** Reads `missing` keys from Redis into the cache (and `found`). */
  const load = async (type: string, missing: string[], found?: Map<string, unknown>, warmed = false) => {
    const key = keys.authKeys(deviceId, type);
    const values = await redis.hmget(key, ...missing);
    missing.forEach((id, i) => {
      // Written while this read was on its way: the write is newer than what Redis said.
      if (pending.get(type)?.has(id)) return void found?.set(id, pending.get(type)!.get(id));
      // A lookup read it meanwhile (and counted it): not marked as warmed ahead of it.
      if (warmed && cache.has(type, id)) return;
      const raw = values[i];
      let value: unknown = raw ? decodeAuthValue(enc.openText(raw, storageContext(key, id))) : null;
      if (type === 'app-state-sync-key' && value) {
        value = proto.Message.AppStateSyncKeyData.fromObject(value as object);
      }
      cache.set(type, id, value, raw?.length ?? 0, warmed);
      found?.set(id, value);
    });
  };

  return {
    state: {
      creds,
      keys: {
        get: async <T extends keyof SignalDataTypeMap>(type: T, ids: string[]) => {
          const found = new Map<string, unknown>();
          const inFlight = pending.get(type);
          const missing: string[] = [];
          let warmedMisses = 0;
          for (const id of ids) {
            if (inFlight?.has(id)) found.set(id, inFlight.get(id));
            else if (cache.has(type, id)) {
              found.set(id, cache.get(type, id));
              if (!cache.lookupHits(type, id)) warmedMisses++;
            } else missing.push(id);
          }
          const misses = missing.length + warmedMisses;
          cache.count(ids.length - misses, misses);
          if (missing.length > 0) await load(type, missing, found);
          const out: { [id: string]: SignalDataTypeMap[T] } = {};
          for (const id of ids) {
            const v = found.get(id);
            if (v !== null && v !== undefined) out[id] = v as SignalDataTypeMap[T];
          }
          return out;
        },
        /**
         * Reads the keys not cached into the cache ahead of their lookups, counting nothing: their
         * first lookup counts as the miss it would have been (`AuthCacheScope.lookupHits`).
         */
        warm: async (type: string, ids: string[]) => {
          const inFlight = pending.get(type);
          const missing = ids.filter((id) => !inFlight?.has(id) && !cache.has(type, id));
          if (missing.length > 0) await load(type, missing, undefined, true);
        },
        set: async (data: SignalDataSet) => {
          const targets: string[] = [];
          const ops: Op[] = [];
          const written = new Map<string, Map<string, unknown>>();
          for (const type of Object.keys(data) as (keyof SignalDataSet)[]) {
            const entries = data[type];
            if (!entries) continue;
            const key = keys.authKeys(deviceId, type);
            const index = targets.push(key) - 1;
            const values = new Map<string, unknown>();
            written.set(type, values);
            for (const [id, value] of Object.entries(entries)) {
              const sealed = value
                ? enc.sealText(encodeAuthValue(value), storageContext(key, id))
                : undefined;
              values.set(id, value ?? null);
              if (UNCACHED_WRITES.has(type)) cache.delete(type, id);
              else cache.set(type, id, value ?? null, sealed?.length ?? 0);
              ops.push(sealed ? [index, 'hset', id, sealed] : [index, 'hdel', id]);
            }
          }
          await withPending(written, () => write(targets, ops));
          if (data['lid-mapping'] && opts.onLidMapping) {
            const pairs = lidPairs(data['lid-mapping']);
            if (pairs.length) opts.onLidMapping(pairs);
          }
        },
      },
    },
    saveCreds: () => write([credsKey], [[0, 'set', sealCreds(enc, deviceId, creds)]]),
    get registered() {
      return isLinked(creds);
    },
    release: () => cache.release(),
  };
}

/**
 * Stores a device's credentials as `saveCreds` does (sealed, fenced by the lease `epoch`), for
 * credentials made without a socket: the test kit's fast link (benches and tests), which has the
 * simulator provision the companion and builds what Baileys would have after pair-success.
 */
export function storeAuthCreds(
  redis: RedisClient,
  enc: Encryption,
  deviceId: string,
  epoch: number,
  creds: AuthenticationCreds,
): Promise<FencedWriteOutcome> {
  const credsKey = keys.authCreds(deviceId);
  return fencedWrite(redis, deviceId, epoch, [credsKey], [[0, 'set', sealCreds(enc, deviceId, creds)]]);
}

/** True when the device has stored credentials of a linked account. */
export async function hasLinkedCredentials(
  redis: RedisClient,
  deviceId: string,
  enc: Encryption,
): Promise<boolean> {
  const raw = await redis.get(keys.authCreds(deviceId));
  if (!raw) return false;
  return isLinked(readCreds(enc, deviceId, raw));
}

/**
 * `me` alone is not a link: requestPairingCode sets it before the phone confirmed anything.
 * `account` (the signed device identity) only exists after pair-success.
 */
function isLinked(creds: AuthenticationCreds): boolean {
  return Boolean(creds.me?.id && creds.account);
}

/** Deletes every credential and key of the device, fenced by the lease like any other write. */
export async function purgeAuthState(redis: RedisClient, deviceId: string, epoch: number): Promise<boolean> {
  // A missing lease is not ours either: nothing is purged (false), as when another epoch holds it.
  // The id goes into a SCAN MATCH pattern: glob characters would match other devices' keys.
  if (!DEVICE_ID_PATTERN.test(deviceId)) throw new Error(`not a device id: ${JSON.stringify(deviceId)}`);
  // SCAN sees one server: on a Cluster, ask every master (the keys are all on the device's).
  const found: string[] = [];
  for (const node of masterNodes(redis)) {
    let cursor = '0';
    do {
      const [next, batch] = await node.scan(cursor, 'MATCH', keys.authPattern(deviceId), 'COUNT', 500);
      cursor = next;
      found.push(...batch);
    } while (cursor !== '0');
  }
  // The device's phone <-> LID map goes with the credentials (libs/store contact-identities.ts).
  const targets = [...new Set([...found, keys.contactIdentities(deviceId)])];
  const outcome = await fencedWrite(
    redis,
    deviceId,
    epoch,
    targets,
    targets.map((_, i) => [i, 'del'] as Op),
  );
  return outcome === 'applied';
}

/**
 * Every phone <-> LID pair the device's auth state holds (Baileys' `lid-mapping` keys), read in
 * pages of `pageSize` (HSCAN): what a device linked before the identity map existed already knew.
 */
export async function* storedLidMappings(
  redis: RedisClient,
  enc: Encryption,
  deviceId: string,
  pageSize = 500,
): AsyncGenerator<{ phone: string; lid: string }[]> {
  const key = keys.authKeys(deviceId, 'lid-mapping');
  let cursor = '0';
  do {
    const [next, flat] = await redis.hscan(key, cursor, 'COUNT', pageSize);
    cursor = next;
    const entries: Record<string, unknown> = {};
    for (let i = 0; i + 1 < flat.length; i += 2) {
      const id = flat[i]!;
      if (id.endsWith('_reverse')) continue;
      entries[id] = decodeAuthValue(enc.openText(flat[i + 1]!, storageContext(key, id)));
    }
    const pairs = lidPairs(entries);
    if (pairs.length) yield pairs;
  } while (cursor !== '0');
}

/** The pairs of a `lid-mapping` write: `<phone>` -> `<lid>` (the `<lid>_reverse` entries mirror them). */
function lidPairs(entries: Record<string, unknown>): { phone: string; lid: string }[] {
  const pairs: { phone: string; lid: string }[] = [];
  for (const [id, value] of Object.entries(entries)) {
    if (id.endsWith('_reverse') || typeof value !== 'string' || !value) continue;
    pairs.push({ phone: id, lid: `${value}@lid` });
  }
  return pairs;
}
