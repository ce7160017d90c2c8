// Narrow imports only (never a package index): the sender's lease-renewer thread loads this module
// through `@mgw/store/coordination`, and an index would bring config, logging and metrics (joi,
// winston, prom-client) into its isolate.
import type { RedisClient } from '@mgw/common'; // a type: erased, loads nothing
import { runScriptMany } from '@mgw/common/redis-scripts';
import { storeScript } from '../lua.js';

/**
 * A lease with fencing, the one the product uses wherever at most one process may act on a thing
 * at a time (a device's WhatsApp socket, a device's webhook deliveries and broker relay, a pool's
 * mover, a fleet's periodic jobs through `IntervalLock`): a string key with a TTL
 * naming its holder and an epoch, the epoch drawn from a counter incremented on every take, so
 * holders are totally ordered and a write checked against (owner, epoch) is refused to a holder
 * that lost the lease meanwhile (it paused past the TTL and another took over). The Lua lives in
 * `lua/lease-*.lua` and `lua/includes/lease.lua`; what differs between the users is parameters:
 * their keys, TTL, the value's form, whether a lease is reserved for a hand-over and whose leases
 * are taken over.
 */
export interface LeaseKeys {
  /** The lease: a string with a TTL. */
  lease: string;
  /** The epoch counter (never expires: an epoch is never reused). */
  fence: string;
  /** A hand-over reserving the lease for one owner (`{to, at}` JSON with a TTL), if the user has one. */
  reservation: string;
}

/**
 * The keys of a lease stored at `lease`, its counter and reservation beside it in its Redis Cluster
 * slot (the scripts touch all three): a key with a hash tag (`mgw:{pool:p1}:mover`) shares its tag
 * with `<lease>:fence` and `<lease>:reserved`; a key without one (`mgw:event-log:trim-lock`) is
 * hashed whole, so the keys beside it take the whole key as their tag
 * (`mgw:event-log:trim-lock:{mgw:event-log:trim-lock}:fence`).
 */
export function leaseKeysBeside(lease: string): LeaseKeys {
  // Redis hashes the text between the first `{` and the first `}` after it, when that is not empty.
  const tagged = /^[^{]*\{[^}]+\}/.test(lease);
  // Untagged, the whole key becomes the tag of the keys beside it: a brace in it would end that tag early.
  if (!tagged && /[{}]/.test(lease))
    throw new Error(
      `lease key ${lease}: a brace outside a hash tag would put the keys beside it in other slots`,
    );
  const base = tagged ? lease : `${lease}:{${lease}}`;
  return { lease, fence: `${base}:fence`, reservation: `${base}:reserved` };
}

/**
 * How the lease's value is written, each form kept by the records that already use it:
 * - json: `{"owner": …, "epoch": …}` (device leases, read by `FencedLeases.current`);
 * - token: `<owner>:<epoch>`, the fencing token the holder carries (webhook delivery leases).
 */
export type LeaseForm = 'json' | 'token';

/** A lease held: by whom, of what, since which epoch. */
export interface HeldLease {
  /** What the lease is of (e.g. a device id). */
  id: string;
  owner: string;
  epoch: number;
}

/**
 * A lease taken; `handedOverAt` (ms) when it came by a directed hand-over started then,
 * `takenFrom` when it was taken over from an owner judged dead.
 */
export interface TakenLease extends HeldLease {
  handedOverAt?: number;
  takenFrom?: string;
}

/**
 * - renewed: still ours, TTL extended.
 * - restored: the TTL had run out (a late round) but nobody took the lease since (the epoch
 *   counter is still ours): the same lease, same epoch, is set again. Nothing to fence.
 * - lost: someone else holds it now, or held it meanwhile: stop, never write again.
 * - missing: the TTL ran out while we were slow (single `renew` only; `renewMany` restores).
 * - unknown: Redis did not answer: keep going, retry on the next round.
 */
export type RenewOutcome = 'renewed' | 'restored' | 'lost' | 'missing' | 'unknown';

/** Takes a free lease, a reserved one for its target, or one held by a dead owner. */
const LEASE_ACQUIRE = storeScript<[number, number, string]>('lease-acquire-3');
/** Extends a lease still the caller's. */
const LEASE_RENEW = storeScript<Exclude<RenewOutcome, 'restored' | 'unknown'>>('lease-renew-1');
/** Renews, or restores a lapsed lease nobody took since. */
const RENEW_OR_RESTORE = storeScript<RenewOutcome>('lease-renew-or-restore-2');
/** Compare-and-delete, moving the epoch on, with an optional hand-over reservation. */
const RELEASE = storeScript<number>('lease-release-3');

export interface FencedLeasesOptions {
  /** The keys of the lease of `id` (all in one hash slot, e.g. one device's `{deviceId}` tag). */
  keys: (id: string) => LeaseKeys;
  form: LeaseForm;
  /** How long a take, a renewal or a restore keeps the lease. */
  ttlMs: number;
}

/**
 * Leases of one kind (one key family, one value form, one TTL) taken, renewed and released by
 * scripts that keep the fencing: every take moves the epoch on, every write checks it.
 */
export class FencedLeases {
  constructor(
    private readonly redis: RedisClient,
    readonly opts: FencedLeasesOptions,
  ) {}

  /**
   * Takes the lease of `id` for `owner` when nobody holds it (nor is it reserved for another);
   * one held by one of `deadOwners` (their liveness expired) is taken over. Else undefined.
   */
  async acquire(
    id: string,
    owner: string,
    deadOwners: readonly string[] = [],
  ): Promise<TakenLease | undefined> {
    const reply = await LEASE_ACQUIRE.run(
      this.redis,
      this.acquireKeys(id),
      this.acquireArgs(owner, deadOwners),
    );
    return taken(id, owner, reply);
  }

  /** `acquire` for many ids in one round trip (one pipeline per node); a failed one is undefined. */
  async acquireMany(
    ids: readonly string[],
    owner: string,
    deadOwners: readonly string[] = [],
  ): Promise<(TakenLease | undefined)[]> {
    if (ids.length === 0) return [];
    const args = this.acquireArgs(owner, deadOwners);
    const replies = await runScriptMany(
      this.redis,
      LEASE_ACQUIRE,
      ids.map((id) => ({ keys: this.acquireKeys(id), args })),
    );
    return ids.map((id, i) => {
      const r = replies[i];
      return r instanceof Error || !r ? undefined : taken(id, owner, r);
    });
  }

  /** Extends the lease while it is `lease`'s; `unknown` when Redis did not answer. */
  async renew(lease: HeldLease): Promise<RenewOutcome> {
    return this.extend(lease).catch(() => 'unknown' as const);
  }

  /** `renew`, but a Redis error is thrown (the caller decides what an unanswered renewal means). */
  async extend(lease: HeldLease): Promise<'renewed' | 'lost' | 'missing'> {
    return LEASE_RENEW.run(
      this.redis,
      [this.opts.keys(lease.id).lease],
      [lease.owner, lease.epoch, this.opts.ttlMs, this.opts.form],
    );
  }

  /** Renews (or restores, see RenewOutcome) every lease in one round trip. */
  async renewMany(leases: readonly HeldLease[]): Promise<RenewOutcome[]> {
    if (leases.length === 0) return [];
    const replies = await runScriptMany(
      this.redis,
      RENEW_OR_RESTORE,
      leases.map((l) => {
        const k = this.opts.keys(l.id);
        return { keys: [k.lease, k.fence], args: [l.owner, l.epoch, this.opts.ttlMs, this.opts.form] };
      }),
    );
    return replies.map((r) => (typeof r === 'string' ? r : 'unknown'));
  }

  /**
   * Gives the lease back when it is still `lease`'s (true then); with `handOver`, reserves it for
   * the owner `to` for `holdMs` in the same step (nobody else can take it meanwhile).
   */
  async release(lease: HeldLease, handOver?: { to: string; holdMs: number }): Promise<boolean> {
    const k = this.opts.keys(lease.id);
    const args: (string | number)[] = [lease.owner, lease.epoch, this.opts.form];
    if (handOver) args.push(handOver.to, handOver.holdMs);
    return (await RELEASE.run(this.redis, [k.lease, k.reservation, k.fence], args)) === 1;
  }

  /** The current holder of the lease of `id`, if any. */
  async current(id: string): Promise<HeldLease | undefined> {
    const raw = await this.redis.get(this.opts.keys(id).lease);
    return raw ? { id, ...leaseHolder(this.opts.form, raw) } : undefined;
  }

  private acquireKeys(id: string): string[] {
    const k = this.opts.keys(id);
    return [k.lease, k.fence, k.reservation];
  }

  private acquireArgs(owner: string, deadOwners: readonly string[]): (string | number)[] {
    return [owner, this.opts.ttlMs, this.opts.form, ...deadOwners];
  }
}

function taken(
  id: string,
  owner: string,
  [epoch, since, from]: [number, number, string],
): TakenLease | undefined {
  if (!(epoch > 0)) return undefined;
  return {
    id,
    owner,
    epoch,
    ...(since > 0 ? { handedOverAt: since } : {}),
    ...(from ? { takenFrom: from } : {}),
  };
}

/** The holder named by a lease's value (`raw`, as read from its key), as includes/lease.lua reads it. */
export function leaseHolder(form: LeaseForm, raw: string): { owner: string; epoch: number } {
  if (form === 'token') {
    const at = raw.lastIndexOf(':');
    return { owner: raw.slice(0, at), epoch: Number(raw.slice(at + 1)) };
  }
  const parsed = JSON.parse(raw) as { owner: string; epoch: number };
  return { owner: parsed.owner, epoch: Number(parsed.epoch) };
}

/** A lease owner id unique to this process (hostname + pid + random): a restarted pod is a new owner. */
export function processOwnerId(role: string): string {
  const host = process.env.HOSTNAME ?? 'local';
  return `${role}:${host}:${process.pid}:${Math.random().toString(36).slice(2, 8)}`;
}
