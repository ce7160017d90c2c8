import type { Redis } from 'ioredis';
import { keys } from '@mgw/contracts';

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
 * - lost: someone else holds it now: close the socket, never write auth state again.
 * - missing: the TTL ran out while we were slow: try to re-acquire at once.
 * - unknown: Redis did not answer: keep the socket, retry on the next tick.
 */
export type RenewOutcome = 'renewed' | 'lost' | 'missing' | 'unknown';

// Atomic "SET NX PX + INCR epoch": the epoch is only consumed when the lease is really taken.
const ACQUIRE = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local epoch = redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], cjson.encode({owner = ARGV[1], epoch = epoch}), 'PX', tonumber(ARGV[2]))
return epoch
`;

// A plain GET + PEXPIRE races with a takeover between the two commands.
const RENEW = `
local raw = redis.call('GET', KEYS[1])
if not raw then return 'missing' end
local lease = cjson.decode(raw)
if lease.owner == ARGV[1] and tonumber(lease.epoch) == tonumber(ARGV[2]) then
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]))
  return 'renewed'
end
return 'lost'
`;

// Compare-and-delete: a slow shutdown must not delete a lease that already moved on.
const RELEASE = `
local raw = redis.call('GET', KEYS[1])
if not raw then return 0 end
local lease = cjson.decode(raw)
if lease.owner == ARGV[1] and tonumber(lease.epoch) == tonumber(ARGV[2]) then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
`;

export class LeaseManager {
  constructor(
    private readonly redis: Redis,
    /** Unique per process (hostname + pid + random), so a restarted pod is a new owner. */
    readonly owner: string,
    private readonly ttlMs: number,
  ) {}

  /** Takes the lease when nobody holds it; undefined when it is held. */
  async acquire(deviceId: string): Promise<Lease | undefined> {
    const epoch = (await this.redis.eval(
      ACQUIRE,
      2,
      keys.lease(deviceId),
      keys.leaseEpoch(deviceId),
      this.owner,
      String(this.ttlMs),
    )) as number;
    return epoch > 0 ? { deviceId, owner: this.owner, epoch } : undefined;
  }

  async renew(lease: Lease): Promise<RenewOutcome> {
    try {
      const result = (await this.redis.eval(
        RENEW,
        1,
        keys.lease(lease.deviceId),
        lease.owner,
        String(lease.epoch),
        String(this.ttlMs),
      )) as RenewOutcome;
      return result;
    } catch {
      return 'unknown';
    }
  }

  /** Returns true when the lease was ours and is now gone. */
  async release(lease: Lease): Promise<boolean> {
    const n = (await this.redis.eval(
      RELEASE,
      1,
      keys.lease(lease.deviceId),
      lease.owner,
      String(lease.epoch),
    )) as number;
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

/** A lease owner id unique to this process. */
export function processOwnerId(role: string): string {
  const host = process.env.HOSTNAME ?? 'local';
  return `${role}:${host}:${process.pid}:${Math.random().toString(36).slice(2, 8)}`;
}
