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
/** An unanswered command (a blackholed link, a frozen Redis) fails after this long. */
const commandTimeoutMs = Math.max(1000, Math.floor(opts.renewMs / 2));
/**
 * After a round that left a renewal unanswered (`unknown`), the next one comes this soon, doubling
 * up to RETRY_MAX_MS (never past the normal interval), not a whole interval later: a link that
 * flaps every few seconds would otherwise fail each of the three rounds a lease's TTL holds and
 * let every lease lapse at once. An answered round goes back to the normal interval.
 */
const RETRY_FIRST_MS = Math.min(250, opts.renewMs);
const RETRY_MAX_MS = Math.min(1000, opts.renewMs);
// Fail fast: no offline queue, one try, an unanswered command fails after commandTimeoutMs; an
// unanswered round is reported `unknown` and retried, never queued for later. Its own options
// make it so, not the 'producer' role, whose guard against a silent Redis (redis.ts,
// failFastWhileSilent) would refuse the retries themselves until a probe heard Redis: each round
// is its own probe here. And it reconnects within half a second however long Redis was away: the
// shared strategy's wait grows to 2 s, which can miss a link back for a second (a lease's last
// chance), and a connection that is not back sends nothing (the retries cost Redis nothing).
const redis = createRedis(opts.redis as RedisConfig, 'worker', `${opts.owner.split(':')[0]}-lease-renewer`, {
  enableOfflineQueue: false,
  maxRetriesPerRequest: 1,
  commandTimeout: commandTimeoutMs,
  connectTimeout: commandTimeoutMs,
  retryStrategy: (times: number) => Math.min(times * 100, 500),
});
let timer: NodeJS.Timeout | undefined;
/** The delay of the pending retry while renewals go unanswered; 0 once a round was answered. */
let retryMs = 0;
let running = false;
let lastStartedAt = 0;
/** The connection came back while a round ran (see the 'ready' listener below). */
let readyMeanwhile = false;
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

/** One round; false when a renewal went unanswered (`unknown`), to be retried soon. */
async function round(): Promise<boolean> {
  const silentMs = mainSilentMs();
  if (silentMs > opts.stallLimitMs) {
    // The main thread is hung: let the leases lapse so another sender can take the devices.
    send({ type: 'stalled', silentMs });
    return true;
  }
  const leases = [...held].map(([deviceId, epoch]) => ({ deviceId, owner: opts.owner, epoch }));
  if (leases.length === 0) return true;
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
  return !outcomes.includes('unknown');
}

function schedule(delayMs: number): void {
  if (stopping) return;
  clearTimeout(timer);
  timer = setTimeout(runRound, delayMs);
}

/** The soonest the next round may start: rounds never come closer than RETRY_FIRST_MS. */
const soonest = () => Math.max(0, lastStartedAt + RETRY_FIRST_MS - Date.now());

function runRound(): void {
  timer = undefined;
  running = true;
  readyMeanwhile = false;
  const started = (lastStartedAt = Date.now());
  void round()
    .catch(() => false)
    .then((answered) => {
      running = false;
      if (answered) {
        retryMs = 0;
        // A round that took long (slow Redis) is followed by the next one sooner, never later.
        schedule(Math.max(0, opts.renewMs - (Date.now() - started)));
        return;
      }
      retryMs = retryMs === 0 ? RETRY_FIRST_MS : Math.min(2 * retryMs, RETRY_MAX_MS);
      schedule(readyMeanwhile ? soonest() : retryMs);
    });
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

// Reconnected while renewals go unanswered: the next round goes now (the link may be back for a
// moment only), not at the next retry. The first 'ready' (no round yet) starts the rounds below.
redis.on('ready', () => {
  if (retryMs === 0 || stopping) return;
  if (running) readyMeanwhile = true;
  else schedule(soonest());
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
