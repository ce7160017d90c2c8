// Narrow entries, not the packages' indexes: the renewer thread loads this module, and each
// package index would bring config, logging and metrics (joi, winston, prom-client) into its isolate.
import type { RedisClient } from '@mgw/common'; // a type: erased, loads nothing
import { keys } from '@mgw/contracts/keys';
import { FencedLeases, type LeaseKeys, type RenewOutcome, type TakenLease } from '@mgw/store/coordination';

export { processOwnerId, type RenewOutcome } from '@mgw/store/coordination';

/**
 * Device leases: at most one process holds a device (and so its WhatsApp socket) at a time. A
 * lease with fencing of @mgw/store (`FencedLeases`): the value is `{owner, epoch}` JSON with a
 * TTL; the epoch comes from a per-device counter so ownership changes are totally ordered and
 * auth-state writes can be fenced by it. A directed hand-over reserves a device for one sender
 * (fair share), and a sender judged dead (its liveness expired, see @mgw/store's Liveness) has its
 * devices taken over before their leases lapse.
 */
export interface Lease {
  deviceId: string;
  owner: string;
  epoch: number;
}

/**
 * A lease taken; `handedOverAt` (ms) when it came by a directed hand-over started then,
 * `takenFrom` when it was taken over from an owner judged dead.
 */
export interface AcquiredLease extends Lease {
  handedOverAt?: number;
  takenFrom?: string;
}

/** A device's lease keys: all carry its `{deviceId}` tag (one slot on a Redis Cluster). */
const deviceLeaseKeys = (deviceId: string): LeaseKeys => ({
  lease: keys.lease(deviceId),
  fence: keys.leaseEpoch(deviceId),
  reservation: keys.handover(deviceId),
});

const deviceLeases = (redis: RedisClient, ttlMs: number) =>
  new FencedLeases(redis, { keys: deviceLeaseKeys, form: 'json', ttlMs });

const held = (lease: Lease) => ({ id: lease.deviceId, owner: lease.owner, epoch: lease.epoch });

function acquired(taken: TakenLease | undefined): AcquiredLease | undefined {
  if (!taken) return undefined;
  const { id, ...rest } = taken;
  return { deviceId: id, ...rest };
}

export class LeaseManager {
  private readonly leases: FencedLeases;

  constructor(
    redis: RedisClient,
    /** Unique per process (hostname + pid + random), so a restarted pod is a new owner. */
    readonly owner: string,
    readonly ttlMs: number,
  ) {
    this.leases = deviceLeases(redis, ttlMs);
  }

  /** Takes the lease when nobody holds it (nor is it handed over to another); else undefined. */
  async acquire(deviceId: string): Promise<AcquiredLease | undefined> {
    return acquired(await this.leases.acquire(deviceId, this.owner));
  }

  /**
   * `acquire` for many devices in one round trip (one pipeline); a failed one is undefined. A lease
   * held by one of `deadOwners` (their liveness expired) is taken over.
   */
  async acquireMany(
    deviceIds: readonly string[],
    deadOwners: readonly string[] = [],
  ): Promise<(AcquiredLease | undefined)[]> {
    return (await this.leases.acquireMany(deviceIds, this.owner, deadOwners)).map(acquired);
  }

  /** Extends the lease; `missing` when it ran out meanwhile, `unknown` when Redis did not answer. */
  async renew(lease: Lease): Promise<RenewOutcome> {
    return this.leases.renew(held(lease));
  }

  /** Renews (or restores, see RenewOutcome) every lease in one round trip. */
  async renewAll(leases: readonly Lease[]): Promise<RenewOutcome[]> {
    return this.leases.renewMany(leases.map(held));
  }

  /** Returns true when the lease was ours and is now gone. */
  async release(lease: Lease): Promise<boolean> {
    return this.leases.release(held(lease));
  }

  /**
   * Releases the lease and reserves the device for the sender `to` for `holdMs` (directed
   * hand-over): nobody else can take it meanwhile. True when the lease was ours.
   */
  async releaseTo(lease: Lease, to: string, holdMs: number): Promise<boolean> {
    return this.leases.release(held(lease), { to, holdMs });
  }

  /** The current holder of a device, if any. */
  async current(deviceId: string): Promise<Lease | undefined> {
    const lease = await this.leases.current(deviceId);
    return lease && { deviceId, owner: lease.owner, epoch: lease.epoch };
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

/** Renews (or restores) every lease in one round trip; a failed reply (or pipeline) is `unknown`. */
export async function renewLeases(
  redis: RedisClient,
  leases: readonly Lease[],
  ttlMs: number,
): Promise<RenewOutcome[]> {
  return deviceLeases(redis, ttlMs).renewMany(leases.map(held));
}
