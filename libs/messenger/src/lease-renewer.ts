import { EventEmitter } from 'node:events';
import { Worker } from 'node:worker_threads';
import type { RedisConfig } from '@mgw/common';
import type { Lease, RenewOutcome } from './lease.js';

/** What the renewer thread is started with. */
export interface LeaseRenewerOptions {
  /**
   * Where its own Redis connection goes (never the main thread's: that one may be busy): a URL,
   * or the service's Redis config (a Redis Cluster's seeds when `REDIS_CLUSTER_NODES` is set).
   */
  redis: string | RedisConfig;
  owner: string;
  ttlMs: number;
  /** A round every `renewMs`; a round that ran late is followed by the next one at once. */
  renewMs: number;
  /**
   * The thread stops renewing when the main thread showed no sign of life for this long (a hung
   * process must not hold its devices forever); default 4 × TTL.
   */
  stallLimitMs?: number;
  /**
   * Beat into this liveness set every twelfth of its TTL (see @mgw/store's Liveness) and report the owners
   * judged dead (`dead` events), so their devices can be taken over before their leases lapse.
   */
  liveness?: { key: string; ttlMs: number };
}

/** One renewal round: when it was sent and every lease's outcome. */
export interface RenewRound {
  sentAt: number;
  /** From sending the pipeline to its last reply. */
  durationMs: number;
  outcomes: { deviceId: string; epoch: number; outcome: RenewOutcome }[];
}

/** Messages main thread -> renewer thread. */
export type RenewerCommand =
  { type: 'set'; deviceId: string; epoch: number } | { type: 'delete'; deviceId: string } | { type: 'stop' };

/** Messages renewer thread -> main thread. */
export type RenewerEvent =
  | { type: 'ready' }
  | { type: 'round'; round: RenewRound }
  | { type: 'stalled'; silentMs: number }
  | { type: 'dead'; owners: string[] };

/**
 * Where a worker thread starts, on every supported Node: the build's `.js`, or, from the sources
 * (under tsx), ts-worker.mjs, which loads tsx into the thread before the `.ts`.
 */
function threadEntry(module: string): { url: URL; argv: string[] } {
  if (!import.meta.url.endsWith('.ts')) return { url: new URL(`${module}.js`, import.meta.url), argv: [] };
  const source = new URL(`${module}.ts`, import.meta.url);
  return { url: new URL('./ts-worker.mjs', import.meta.url), argv: [source.href] };
}

/**
 * Renews every lease this process holds in ONE pipeline per round, from a worker thread with
 * its own Redis connection and event loop: a main thread busy for seconds (hundreds of sockets
 * decrypting, a long GC) no longer lets its leases lapse. The main thread tells it which leases
 * it holds (`hold`/`drop`) and hears each round's outcomes (`round` events); a lease found taken by
 * another owner is reported as `lost`, one that lapsed with nobody taking it meanwhile is restored
 * with the same epoch (`restored`).
 */
export class LeaseRenewer extends EventEmitter<{
  round: [RenewRound];
  stalled: [number];
  /** The owners judged dead after each liveness beat (an empty list once none is). */
  dead: [string[]];
  error: [Error];
}> {
  private readonly worker: Worker;
  private readonly beat = new Float64Array(new SharedArrayBuffer(8));
  private readonly beatTimer: NodeJS.Timeout;
  private readonly exited: Promise<void>;
  private readonly started: Promise<void>;

  constructor(opts: LeaseRenewerOptions) {
    super();
    this.beat[0] = Date.now();
    const { url, argv } = threadEntry('./lease-renewer.worker');
    this.worker = new Worker(url, {
      argv,
      workerData: { ...opts, stallLimitMs: opts.stallLimitMs ?? 4 * opts.ttlMs, beat: this.beat },
    });
    this.started = new Promise((resolve, reject) => {
      this.worker.on('message', (e: RenewerEvent) => {
        if (e.type === 'ready') resolve();
        else if (e.type === 'round') this.emit('round', e.round);
        else if (e.type === 'dead') this.emit('dead', e.owners);
        else this.emit('stalled', e.silentMs);
      });
      this.worker.once('error', reject);
    });
    this.started.catch(() => undefined);
    this.worker.on('error', (err) => this.emit('error', err));
    this.exited = new Promise((resolve) => this.worker.once('exit', () => resolve()));
    // The main thread's sign of life: cheap, and late only when the loop is blocked.
    this.beatTimer = setInterval(() => (this.beat[0] = Date.now()), 500);
    this.beatTimer.unref();
  }

  /** Resolves once the thread runs and its connection is ready (start it before taking leases). */
  ready(): Promise<void> {
    return this.started;
  }

  /** This process holds `lease` now: renew it from the next round on. */
  hold(lease: Lease): void {
    this.post({ type: 'set', deviceId: lease.deviceId, epoch: lease.epoch });
  }

  /** Stop renewing the device (before releasing its lease). */
  drop(deviceId: string): void {
    this.post({ type: 'delete', deviceId });
  }

  async stop(): Promise<void> {
    clearInterval(this.beatTimer);
    this.post({ type: 'stop' });
    await this.exited;
  }

  private post(cmd: RenewerCommand): void {
    this.worker.postMessage(cmd);
  }
}
