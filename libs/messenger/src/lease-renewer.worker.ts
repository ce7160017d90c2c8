/**
 * The lease renewer's thread (see LeaseRenewer): a loop of one renew-or-restore pipeline
 * (@mgw/store's `FencedLeases.renewMany`) over every held lease, on its own connection, reporting
 * each round to the main thread.
 *
 * It imports only what it runs (the Redis connection, the key builders, and the leases and
 * liveness of the narrow `@mgw/store/coordination`), never a package index: each thread is its
 * own V8 isolate, and the indexes would load the config schemas, the logger and the metrics
 * registry into it for nothing.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { RedisConfig } from '@mgw/common'; // a type: erased, loads nothing
import { createRedis } from '@mgw/common/redis';
import { renewLeases } from './lease.js';
import { Liveness, livenessBeatMs } from '@mgw/store/coordination';
import type { LeaseRenewerOptions, RenewerCommand, RenewerEvent } from './lease-renewer.js';

const opts = workerData as Required<LeaseRenewerOptions> & { beat: Float64Array };
const port = parentPort!;
const held = new Map<string, number>();
// Fail fast: an unanswered round is reported `unknown` and retried, never queued for later.
const redis = createRedis(
  opts.redis as RedisConfig,
  'producer',
  `${opts.owner.split(':')[0]}-lease-renewer`,
  {
    commandTimeout: Math.max(1000, Math.floor(opts.renewMs / 2)),
  },
);
let timer: NodeJS.Timeout | undefined;
let livenessTimer: NodeJS.Timeout | undefined;
let stopping = false;
const liveness = opts.liveness
  ? new Liveness(redis, opts.owner, {
      ...opts.liveness,
      // Past this, every lease of the expired owner has lapsed anyway.
      forgetMs: 2 * opts.ttlMs + opts.liveness.ttlMs,
    })
  : undefined;
let reportedDead = 0;

const send = (e: RenewerEvent) => port.postMessage(e);
/** The main thread showed no sign of life for longer than the stall limit. */
const mainSilentMs = () => Date.now() - opts.beat[0]!;

/** One liveness beat on its own timer (a long renewal round never delays it past its TTL). */
function beatLiveness(): void {
  if (stopping || !liveness) return;
  // A hung main thread stops beating too: the others take its devices over without waiting.
  void liveness
    .beat(mainSilentMs() <= opts.stallLimitMs)
    .then((owners) => {
      // Told while any is dead, and once when none is any more.
      if (owners.length > 0 || reportedDead > 0) send({ type: 'dead', owners });
      reportedDead = owners.length;
    })
    .catch(() => undefined)
    .finally(() => {
      if (!stopping) livenessTimer = setTimeout(beatLiveness, livenessBeatMs(opts.liveness!.ttlMs));
    });
}

async function round(): Promise<void> {
  const silentMs = mainSilentMs();
  if (silentMs > opts.stallLimitMs) {
    // The main thread is hung: let the leases lapse so another sender can take the devices.
    send({ type: 'stalled', silentMs });
    return;
  }
  const leases = [...held].map(([deviceId, epoch]) => ({ deviceId, owner: opts.owner, epoch }));
  if (leases.length === 0) return;
  const sentAt = Date.now();
  const outcomes = await renewLeases(redis, leases, opts.ttlMs);
  // A lease found lost stays out of the rounds; the main thread closes its device.
  leases.forEach((l, i) => {
    if (outcomes[i] === 'lost' && held.get(l.deviceId) === l.epoch) held.delete(l.deviceId);
  });
  send({
    type: 'round',
    round: {
      sentAt,
      durationMs: Date.now() - sentAt,
      outcomes: leases.map((l, i) => ({ deviceId: l.deviceId, epoch: l.epoch, outcome: outcomes[i]! })),
    },
  });
}

function schedule(delayMs: number): void {
  if (stopping) return;
  timer = setTimeout(() => {
    const started = Date.now();
    void round()
      .catch(() => undefined)
      // A round that took long (slow Redis) is followed by the next one sooner, never later.
      .finally(() => schedule(Math.max(0, opts.renewMs - (Date.now() - started))));
  }, delayMs);
}

port.on('message', (cmd: RenewerCommand) => {
  if (cmd.type === 'set') held.set(cmd.deviceId, cmd.epoch);
  else if (cmd.type === 'delete') held.delete(cmd.deviceId);
  else {
    stopping = true;
    clearTimeout(timer);
    clearTimeout(livenessTimer);
    // Every lease was released before: leaving the liveness set frees nothing early.
    void (liveness?.leave() ?? Promise.resolve())
      .catch(() => undefined)
      .finally(() => {
        redis.disconnect();
        port.close();
      });
  }
});

redis.once('ready', () => {
  // Live before the first lease is taken: an owner missing from the set is never taken over early.
  void (liveness?.beat() ?? Promise.resolve())
    .catch(() => undefined)
    .finally(() => {
      send({ type: 'ready' });
      schedule(opts.renewMs);
      if (liveness) livenessTimer = setTimeout(beatLiveness, livenessBeatMs(opts.liveness!.ttlMs));
    });
});
