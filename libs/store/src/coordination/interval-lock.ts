// Narrow imports only (never a package index): this module is part of `@mgw/store/coordination`,
// which the sender's lease-renewer thread loads (see lease.ts).
import type { RedisClient } from '@mgw/common'; // a type: erased, loads nothing
import { FencedLeases, leaseKeysBeside, type HeldLease } from './lease.js';

export interface IntervalLockOptions {
  /** The lock's key (e.g. `keys.eventLogTrimLock()`); its epoch counter goes beside it. */
  key: string;
  /** How often the job is meant to run, once across the fleet. */
  intervalMs: number;
  /** Who takes the lock: this process (`processOwnerId`). */
  owner: string;
}

/**
 * A periodic job that every process of a fleet schedules and one of them runs per interval: the
 * first process whose round comes takes the interval's lock and runs the job; the others skip
 * their rounds while the lock lives. The lock is a lease of `FencedLeases` (token form), so it is
 * taken, renewed and checked by the same scripts as every other lease:
 * - It is taken for a little less than the interval (`holdMs`): the holder's own next round, an
 *   interval later, finds it free, rather than lose that interval to its own lock by a few ms.
 * - It is never given back: it lapses on its own, so runs start about an interval apart whichever
 *   process runs them, and a process whose round comes just after another's run skips it.
 * - While the job runs, its holder renews it, atomically (only while the lease is still its own),
 *   so a run that outlasts its interval keeps the others out instead of running beside them.
 * - A holder that dies stops renewing: the lock lapses at most `holdMs` after its last renewal,
 *   and the next process whose round comes runs the job.
 * - A holder that finds its lock gone or taken while the job runs (it paused past the TTL) has the
 *   job's signal aborted, so the job stops at its next step.
 */
export class IntervalLock {
  /** How long a take or a renewal keeps the lock: the interval less a tenth of it (at most 1 s). */
  readonly holdMs: number;
  private readonly leases: FencedLeases;

  constructor(
    redis: RedisClient,
    private readonly opts: IntervalLockOptions,
  ) {
    this.holdMs = Math.max(1, opts.intervalMs - Math.min(1000, Math.floor(opts.intervalMs / 10)));
    this.leases = new FencedLeases(redis, { keys: leaseKeysBeside, form: 'token', ttlMs: this.holdMs });
  }

  /**
   * Runs `work` when this process takes the lock, and resolves with what it returns; resolves
   * undefined without running it while another process (or an earlier run) holds the lock.
   * `lost` aborts when the lock is no longer this run's.
   */
  async run<T>(work: (lost: AbortSignal) => Promise<T>): Promise<T | undefined> {
    const lease = await this.leases.acquire(this.opts.key, this.opts.owner);
    if (!lease) return undefined;
    const keeper = this.keep(lease);
    try {
      return await work(keeper.lost);
    } finally {
      keeper.stop();
    }
  }

  /** Renews `lease` every third of its TTL until stopped, or until a renewal finds it lost. */
  private keep(lease: HeldLease): { lost: AbortSignal; stop: () => void } {
    const lost = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    let stopped = false;
    const schedule = () => {
      timer = setTimeout(() => void renew(), Math.max(1, Math.floor(this.holdMs / 3))).unref();
    };
    const renew = async () => {
      const outcome = await this.leases.renew(lease);
      if (stopped) return;
      // Unanswered (Redis away): the next renewal asks again; the job's own commands fail meanwhile.
      if (outcome === 'renewed' || outcome === 'unknown') return schedule();
      lost.abort(new Error(`interval lock ${this.opts.key} ${outcome}`));
    };
    schedule();
    return {
      lost: lost.signal,
      stop: () => {
        stopped = true;
        clearTimeout(timer);
      },
    };
  }
}
