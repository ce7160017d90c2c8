// Narrow entries, not the packages' indexes: the renewer thread loads this module, and each
// package index would bring config, logging and metrics (joi, winston, prom-client) into its isolate.
import type { RedisClient } from '@mgw/common'; // a type: erased, loads nothing
import { RedisScript, runScriptMany } from '@mgw/common/redis-scripts';
import { keys } from '@mgw/contracts/keys';

/**
 * Device leases: at most one process holds a device (and so its WhatsApp socket) at a time.
 * The value is `{owner, epoch}` JSON with a TTL; the epoch comes from a per-device counter so
 * ownership changes are totally ordered and auth-state writes can be fenced by it.
 */
export interface Lease {
  deviceId: string;
  owner: string;
  epoch: number;
}

/**
 * - renewed: still ours, TTL extended.
 * - restored: the TTL had run out (a late round) but nobody took the device since (the epoch
 *   counter is still ours): the same lease, same epoch, is set again. Nothing to fence.
 * - lost: someone else holds it now, or held it meanwhile: close the socket, never write again.
 * - missing: the TTL ran out while we were slow (single `renew` only; `renewAll` restores).
 * - unknown: Redis did not answer: keep the socket, retry on the next tick.
 */
export type RenewOutcome = 'renewed' | 'restored' | 'lost' | 'missing' | 'unknown';

/**
 * Atomic "SET NX PX + INCR epoch": the epoch is only consumed when the lease is really taken.
 * KEYS: lease, epoch counter, hand-over. A directed hand-over reserves the device for its target
 * until it expires. ARGV[3..]: owners judged dead (their liveness expired, see liveness.ts): a
 * lease one of them holds is taken over although its TTL has time left; the new epoch fences the
 * old holder should it be alive after all. Returns {epoch, hand-over start ms or 0, the dead
 * owner taken from or ''}; epoch 0 = not taken.
 */
const ACQUIRE = new RedisScript<[number, number, string]>(
  'mgwLeaseAcquire',
  `
local raw = redis.call('GET', KEYS[1])
if raw then
  local holder = cjson.decode(raw).owner
  for i = 3, #ARGV do
    if ARGV[i] == holder then
      local epoch = redis.call('INCR', KEYS[2])
      redis.call('SET', KEYS[1], cjson.encode({owner = ARGV[1], epoch = epoch}), 'PX', tonumber(ARGV[2]))
      return {epoch, 0, holder}
    end
  end
  return {0, 0, ''}
end
local handover = redis.call('GET', KEYS[3])
local since = 0
if handover then
  local h = cjson.decode(handover)
  if h.to ~= ARGV[1] then return {0, 0, ''} end
  since = tonumber(h.at) or 0
  redis.call('DEL', KEYS[3])
end
local epoch = redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], cjson.encode({owner = ARGV[1], epoch = epoch}), 'PX', tonumber(ARGV[2]))
return {epoch, since, ''}
`,
);

// A plain GET + PEXPIRE races with a takeover between the two commands.
const RENEW = new RedisScript<RenewOutcome>(
  'mgwLeaseRenew',
  `
local raw = redis.call('GET', KEYS[1])
if not raw then return 'missing' end
local lease = cjson.decode(raw)
if lease.owner == ARGV[1] and tonumber(lease.epoch) == tonumber(ARGV[2]) then
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]))
  return 'renewed'
end
return 'lost'
`,
);

/**
 * Renew, or restore a lapsed lease when nobody acquired the device since: every acquire
 * increments the epoch counter, so a counter still at our epoch proves it. KEYS: lease, counter.
 */
export const RENEW_OR_RESTORE = new RedisScript<RenewOutcome>(
  'mgwLeaseRenewOrRestore',
  `
local raw = redis.call('GET', KEYS[1])
if not raw then
  if tonumber(redis.call('GET', KEYS[2]) or '0') == tonumber(ARGV[2]) then
    redis.call('SET', KEYS[1], cjson.encode({owner = ARGV[1], epoch = tonumber(ARGV[2])}), 'PX', tonumber(ARGV[3]))
    return 'restored'
  end
  return 'lost'
end
local lease = cjson.decode(raw)
if lease.owner == ARGV[1] and tonumber(lease.epoch) == tonumber(ARGV[2]) then
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]))
  return 'renewed'
end
return 'lost'
`,
);

/**
 * Compare-and-delete: a slow shutdown must not delete a lease that already moved on. The epoch
 * counter (KEYS[3]) moves on too, so a renewal round still in flight cannot restore the released
 * lease. With a target (ARGV[3]), the device is reserved for it (KEYS[2], `{to, at}`, ARGV[4] ms)
 * in the same step.
 */
const RELEASE = new RedisScript<number>(
  'mgwLeaseRelease',
  `
local raw = redis.call('GET', KEYS[1])
if not raw then return 0 end
local lease = cjson.decode(raw)
if lease.owner == ARGV[1] and tonumber(lease.epoch) == tonumber(ARGV[2]) then
  redis.call('DEL', KEYS[1])
  redis.call('INCR', KEYS[3])
  if ARGV[3] and ARGV[3] ~= '' then
    local t = redis.call('TIME')
    local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
    redis.call('SET', KEYS[2], cjson.encode({to = ARGV[3], at = now}), 'PX', tonumber(ARGV[4]))
  end
  return 1
end
return 0
`,
);

/**
 * A lease taken; `handedOverAt` (ms) when it came by a directed hand-over started then,
 * `takenFrom` when it was taken over from an owner judged dead.
 */
export interface AcquiredLease extends Lease {
  handedOverAt?: number;
  takenFrom?: string;
}

const acquireKeys = (deviceId: string) => [
  keys.lease(deviceId),
  keys.leaseEpoch(deviceId),
  keys.handover(deviceId),
];

const releaseKeys = (deviceId: string) => [
  keys.lease(deviceId),
  keys.handover(deviceId),
  keys.leaseEpoch(deviceId),
];

export class LeaseManager {
  constructor(
    private readonly redis: RedisClient,
    /** Unique per process (hostname + pid + random), so a restarted pod is a new owner. */
    readonly owner: string,
    readonly ttlMs: number,
  ) {}

  /** Takes the lease when nobody holds it (nor is it handed over to another); else undefined. */
  async acquire(deviceId: string): Promise<AcquiredLease | undefined> {
    const reply = await ACQUIRE.run(this.redis, acquireKeys(deviceId), [this.owner, this.ttlMs]);
    return this.acquired(deviceId, reply);
  }

  /**
   * `acquire` for many devices in one round trip (one pipeline); a failed one is undefined. A lease
   * held by one of `deadOwners` (their liveness expired) is taken over.
   */
  async acquireMany(
    deviceIds: readonly string[],
    deadOwners: readonly string[] = [],
  ): Promise<(AcquiredLease | undefined)[]> {
    if (deviceIds.length === 0) return [];
    const args = [this.owner, this.ttlMs, ...deadOwners];
    const replies = await runScriptMany(
      this.redis,
      ACQUIRE,
      deviceIds.map((id) => ({ keys: acquireKeys(id), args })),
    );
    return deviceIds.map((id, i) => {
      const r = replies[i];
      return r instanceof Error || !r ? undefined : this.acquired(id, r);
    });
  }

  private acquired(
    deviceId: string,
    [epoch, since, from]: [number, number, string],
  ): AcquiredLease | undefined {
    if (!(epoch > 0)) return undefined;
    return {
      deviceId,
      owner: this.owner,
      epoch,
      ...(since > 0 ? { handedOverAt: since } : {}),
      ...(from ? { takenFrom: from } : {}),
    };
  }

  async renew(lease: Lease): Promise<RenewOutcome> {
    try {
      return await RENEW.run(
        this.redis,
        [keys.lease(lease.deviceId)],
        [lease.owner, lease.epoch, this.ttlMs],
      );
    } catch {
      return 'unknown';
    }
  }

  /** Renews (or restores, see RenewOutcome) every lease in one round trip. */
  async renewAll(leases: readonly Lease[]): Promise<RenewOutcome[]> {
    return renewLeases(this.redis, leases, this.ttlMs);
  }

  /** Returns true when the lease was ours and is now gone. */
  async release(lease: Lease): Promise<boolean> {
    const n = await RELEASE.run(this.redis, releaseKeys(lease.deviceId), [lease.owner, lease.epoch]);
    return n === 1;
  }

  /**
   * Releases the lease and reserves the device for the sender `to` for `holdMs` (directed
   * hand-over): nobody else can take it meanwhile. True when the lease was ours.
   */
  async releaseTo(lease: Lease, to: string, holdMs: number): Promise<boolean> {
    const n = await RELEASE.run(this.redis, releaseKeys(lease.deviceId), [
      lease.owner,
      lease.epoch,
      to,
      holdMs,
    ]);
    return n === 1;
  }

  /** The current holder of a device, if any. */
  async current(deviceId: string): Promise<Lease | undefined> {
    const raw = await this.redis.get(keys.lease(deviceId));
    if (!raw) return undefined;
    const parsed = JSON.parse(raw) as { owner: string; epoch: number };
    return { deviceId, owner: parsed.owner, epoch: Number(parsed.epoch) };
  }

  /** Waits (bounded) until the lease is free and takes it; undefined on timeout. */
  async acquireWithin(deviceId: string, timeoutMs: number, pollMs = 250): Promise<Lease | undefined> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const lease = await this.acquire(deviceId);
      if (lease || Date.now() >= deadline) return lease;
      await new Promise((r) => setTimeout(r, pollMs));
    }
  }
}

/** One pipeline of RENEW_OR_RESTORE for every lease; a failed reply (or pipeline) is `unknown`. */
export async function renewLeases(
  redis: RedisClient,
  leases: readonly Lease[],
  ttlMs: number,
): Promise<RenewOutcome[]> {
  if (leases.length === 0) return [];
  const replies = await runScriptMany(
    redis,
    RENEW_OR_RESTORE,
    leases.map((l) => ({
      keys: [keys.lease(l.deviceId), keys.leaseEpoch(l.deviceId)],
      args: [l.owner, l.epoch, ttlMs],
    })),
  );
  return replies.map((r) => (typeof r === 'string' ? r : 'unknown'));
}

/** A lease owner id unique to this process. */
export function processOwnerId(role: string): string {
  const host = process.env.HOSTNAME ?? 'local';
  return `${role}:${host}:${process.pid}:${Math.random().toString(36).slice(2, 8)}`;
}
