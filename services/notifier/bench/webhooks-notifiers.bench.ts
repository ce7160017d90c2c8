/**
 * The notifier alone, at scale: events written straight into the outboxes of DEVICES devices
 * (as the services' scripts write them), delivered by real notifier processes to receivers on
 * 127.0.0.1 (answering at once; signatures not checked here — webhooks.bench.ts checks them):
 *
 * - 1 notifier: DEVICES × PER_DEVICE events, first write → last delivery (events/s; goal ≥ 1,000);
 * - the same with one more device whose endpoint takes SLOW_MS per request and has a backlog:
 *   the other devices' rate as a ratio of the first (goal ≥ 0.90x: a slow device slows nobody);
 * - 2 notifiers: the same run, events/s, and order violations (a device's delivery that began
 *   before its previous one ended, or came before an event emitted earlier; goal 0);
 * - after IDLE_MS without events (2 notifiers): one event per device, emission → the request
 *   reaching the receiver, p50/p99 (goal p99 ≤ 500 ms: no polling delay after an idle spell).
 */
import { randomUUID } from 'node:crypto';
import { Encryption, WebhookStore, publishEvent } from '@mgw/store';
import { Stack, WebhookReceiver, sleep, waitFor, type ReceivedDelivery } from '@mgw/testing';

const DEVICES = Number(process.env.BENCH_DEVICES ?? 100);
const PER_DEVICE = Number(process.env.BENCH_EVENTS_PER_DEVICE ?? 100);
const SLOW_MS = Number(process.env.BENCH_SLOW_MS ?? 500);
const IDLE_MS = Number(process.env.BENCH_IDLE_MS ?? 10_000);
const IDLE_SPELLS = Number(process.env.BENCH_IDLE_SPELLS ?? 2);

const stack = await Stack.start({
  notifier: true,
  env: { LOG_LEVEL: 'warn', ALLOWED_PRIVATE_HOSTS: '127.0.0.1' },
});
const fast = await WebhookReceiver.start();
const slow = await WebhookReceiver.start();
slow.delayMs = SLOW_MS;
const webhooks = new WebhookStore(stack.redis, Encryption.fromEnv(), 0);
const run = randomUUID().slice(0, 8);
const devices = Array.from({ length: DEVICES }, (_, i) => `bench-${run}-${i}`);
const slowDevice = `bench-${run}-slow`;

/** Writes `perDevice` events on each device (in order per device), many devices at once. */
async function emit(phase: string, ids: string[], perDevice: number): Promise<void> {
  for (let seq = 0; seq < perDevice; seq++) {
    await Promise.all(
      ids.map((d) => publishEvent(stack.redis, d, 'session.status', { status: 'connected', phase, seq })),
    );
  }
}

/** Deliveries of a phase to the fast receiver, per device in the order they began. */
function byDevice(phase: string): Map<string, ReceivedDelivery[]> {
  const out = new Map<string, ReceivedDelivery[]>();
  for (const d of fast.deliveries) {
    if (d.body.data.phase !== phase) continue;
    const id = String(d.body.data.deviceId);
    out.set(id, [...(out.get(id) ?? []), d]);
  }
  return out;
}

/** A delivery that began before the device's previous one ended, or an event before an earlier one. */
function violations(phase: string): { overlaps: number; outOfOrder: number; repeats: number } {
  let overlaps = 0;
  let outOfOrder = 0;
  let repeats = 0;
  for (const list of byDevice(phase).values()) {
    list.sort((a, b) => a.startedAt - b.startedAt);
    let lastSeq = -1;
    for (let i = 0; i < list.length; i++) {
      const d = list[i]!;
      if (i > 0 && d.startedAt < list[i - 1]!.endedAt) overlaps++;
      const seq = Number(d.body.data.seq);
      if (seq === lastSeq) repeats++;
      else if (seq < lastSeq) outOfOrder++;
      lastSeq = Math.max(lastSeq, seq);
    }
  }
  return { overlaps, outOfOrder, repeats };
}

/** How long writing each run's events took (s): the notifiers deliver while they are written. */
const writeSeconds: number[] = [];

async function throughput(phase: string, extra?: () => Promise<void>): Promise<number> {
  const expected = DEVICES * PER_DEVICE;
  const counted = () =>
    new Set(fast.deliveries.filter((d) => d.body.data.phase === phase).map((d) => d.id)).size;
  const t0 = performance.now();
  await Promise.all([
    emit(phase, devices, PER_DEVICE).then(() => writeSeconds.push((performance.now() - t0) / 1000)),
    extra?.(),
  ]);
  await waitFor(() => counted() >= expected, {
    timeoutMs: 600_000,
    intervalMs: 50,
    what: `${phase}: ${expected} events`,
  });
  return expected / ((performance.now() - t0) / 1000);
}

try {
  for (const d of devices) await webhooks.set(d, { url: fast.url });

  await throughput('warm-up');
  const one = await throughput('one');

  await webhooks.set(slowDevice, { url: slow.url });
  const slowBacklog = Math.max(
    10,
    Math.ceil(((DEVICES * PER_DEVICE) / Math.max(one, 1)) * (1000 / SLOW_MS)) + 5,
  );
  const oneWithSlow = await throughput('one-slow', () => emit('one-slow', [slowDevice], slowBacklog));
  const slowGot = slow.arrived;
  await webhooks.remove(slowDevice);

  await stack.startService('notifier');
  const two = await throughput('two');
  const order = violations('two');

  const latencies: number[] = [];
  for (let spell = 0; spell < IDLE_SPELLS; spell++) {
    await sleep(IDLE_MS);
    const from = fast.deliveries.length;
    const sentAt = new Map<string, number>();
    await Promise.all(
      devices.map(async (d) => {
        const id = randomUUID();
        sentAt.set(id, performance.timeOrigin + performance.now());
        await publishEvent(
          stack.redis,
          d,
          'session.status',
          { status: 'connected', phase: `idle-${spell}` },
          { id },
        );
      }),
    );
    await waitFor(() => fast.deliveries.length - from >= DEVICES, {
      timeoutMs: 60_000,
      intervalMs: 5,
      what: 'idle events',
    });
    for (const d of fast.deliveries.slice(from)) {
      const at = sentAt.get(d.id);
      if (at !== undefined) latencies.push(d.startedAt - at);
    }
  }
  latencies.sort((a, b) => a - b);
  const pct = (p: number) =>
    latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? NaN;

  const n = DEVICES * PER_DEVICE;
  console.log(
    `${n} events per run (${DEVICES} devices × ${PER_DEVICE}, written straight into the outboxes, in ${Math.max(...writeSeconds).toFixed(1)} s at most)`,
  );
  console.log(`  1 notifier:                         ${one.toFixed(0)} events/s  (goal ≥ 1000)`);
  console.log(
    `  1 notifier, + 1 device at ${SLOW_MS} ms/request: ${oneWithSlow.toFixed(0)} events/s for the others  (${(oneWithSlow / one).toFixed(2)}x; goal ≥ 0.90x; the slow endpoint got ${slowGot} of its ${slowBacklog}, one at a time)`,
  );
  console.log(
    `  2 notifiers:                        ${two.toFixed(0)} events/s  (${(two / one).toFixed(2)}x of 1)`,
  );
  console.log(
    `  order violations, 2 notifiers:      ${order.overlaps + order.outOfOrder}  (${order.overlaps} overlapping, ${order.outOfOrder} out of order; ${order.repeats} repeated webhook-ids; goal 0)`,
  );
  console.log(
    `  after ${IDLE_MS / 1000} s idle (2 notifiers), emission → delivery: p50 ${pct(50).toFixed(0)} ms, p99 ${pct(99).toFixed(0)} ms over ${latencies.length} events  (goal p99 ≤ 500 ms)`,
  );
} finally {
  for (const d of devices) await webhooks.remove(d).catch(() => undefined);
  await fast.close();
  await slow.close();
  await stack.stop();
}
process.exit(0);
