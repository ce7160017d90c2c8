/**
 * The lease renewer's thread (see LeaseRenewer): a loop of one RENEW_OR_RESTORE pipeline over
 * every held lease, on its own connection, reporting each round to the main thread.
 *
 * It imports only what it runs (the Redis connection, the lease scripts and the key builders),
 * never a package index: each thread is its own V8 isolate, and the indexes would load the
 * config schemas, the logger and the metrics registry into it for nothing.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { RedisConfig } from '@mgw/common'; // a type: erased, loads nothing
import { createRedis } from '@mgw/common/redis';
import { renewLeases } from './lease.js';
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
let stopping = false;

const send = (e: RenewerEvent) => port.postMessage(e);

async function round(): Promise<void> {
  const silentMs = Date.now() - opts.beat[0]!;
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
    redis.disconnect();
    port.close();
  }
});

redis.once('ready', () => {
  send({ type: 'ready' });
  schedule(opts.renewMs);
});
