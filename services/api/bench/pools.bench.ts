/**
 * A pooled list when devices drop out halfway (the issue's goal: "A pooled list of 3,000
 * recipients over 5 devices, one device time-locked and one logged out halfway: every recipient
 * ends sent once or failed with a reason; 0 lost, 0 sent twice; the remaining devices finish at
 * ≥ 0.9 of their paced ideal").
 *
 * The whole gateway (API with its pool mover, connection, one sender; the simulator in this
 * process): BENCH_POOL_DEVICES (5) devices linked by QR with distinct phones, a pool of them and a
 * token linked to the pool. Every device is paced at a fixed gap, BENCH_POOL_GAP_MS (100) ms — the
 * sender's default gap and each device's `sendGapMs`, no jitter — and the mover looks every
 * POOL_MOVE_INTERVAL_MS (500) ms. One list of BENCH_POOL_RECIPIENTS (3,000) new contacts goes
 * through the pool token; once about half are sent, device 1 is time-locked (BENCH_POOL_LOCK_MS,
 * 10 min: it outlasts the run) and device 2 logged out from its phone. When the devices left have
 * nothing queued and the dropped ones' queues stay still, a message still held on the time-locked
 * device (its send had begun there before the lock: it never moves) is given its chance: the lock
 * is lifted and it is waited for. Then every message is read once (GET /messages/:id with the pool
 * token) and every recipient's inbox at the simulator.
 *
 * Printed: per device its total, sent and failed (the list's per-device counts); `moved`; lost (a
 * message neither sent/delivered/read nor failed at the end); twice (a recipient with more than
 * one message in the inbox); failed by reason; and the pace of each device left: its paced ideal
 * (messages it sent after the drop × the gap) against the time from the drop to its last send (the
 * records' sentAt), their ratio and the slowest, beside the goal 0.9 — and, as this run's baseline,
 * the same ratio before the drop (its sends from its first to its last before the drop), since a
 * loaded machine slows both alike. Nothing is asserted.
 *
 * The services run built, as `npm start` runs them (run `npm run build` first; a missing or stale
 * build stops the bench); BENCH_SOURCES=1 runs them through tsx from the sources.
 */
import os from 'node:os';
import { keys } from '@mgw/contracts';
import { Stack, waitFor } from '@mgw/testing';

const DEVICES = Math.max(3, Number(process.env.BENCH_POOL_DEVICES ?? 5));
const RECIPIENTS = Number(process.env.BENCH_POOL_RECIPIENTS ?? 3000);
const GAP_MS = Number(process.env.BENCH_POOL_GAP_MS ?? 100);
const MOVE_INTERVAL_MS = Number(process.env.POOL_MOVE_INTERVAL_MS ?? 500);
const LOCK_MS = Number(process.env.BENCH_POOL_LOCK_MS ?? 600_000);
/** Requests in flight when every message is read at the end. */
const READ_CONCURRENCY = 8;
const GOAL = 0.9;
const ADMIN_TOKEN = 'pools-bench-admin-token-0123456789abcdef';

type Counts = Record<'sent' | 'delivered' | 'read' | 'failed' | 'queued' | 'scheduled', number>;
interface PoolBatch {
  total: number;
  state: string;
  counts: Counts;
  devices: { deviceId: string; total: number; counts: Counts }[];
  moved: number;
}
interface MessageRecord {
  status?: string;
  deviceId?: string;
  error?: string;
  sentAt?: string;
  heldReason?: string;
}

const done = (c: Counts) => c.sent + c.delivered + c.read;
const waiting = (c: Counts) => c.queued + c.scheduled;
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

const t0 = performance.now();
const stack = await Stack.start({
  env: {
    LOG_LEVEL: 'warn',
    ADMIN_API_TOKEN: ADMIN_TOKEN,
    POOL_MOVE_INTERVAL_MS: String(MOVE_INTERVAL_MS),
    SEND_MIN_GAP_MS: String(GAP_MS),
    SEND_GAP_JITTER_MS: '0',
  },
  built: process.env.BENCH_SOURCES !== '1',
});
try {
  const suffix = Math.random().toString(36).slice(2, 7);
  const members = Array.from({ length: DEVICES }, (_, i) => ({
    deviceId: `pool-bench-${suffix}-${i + 1}`,
    phone: `1555096${String(i + 1).padStart(4, '0')}`,
    token: '',
  }));
  const linkStart = performance.now();
  for (const m of members) {
    m.token = await stack.createToken(m.deviceId);
    await stack.linkByQr(m.phone, `Pool bench ${m.deviceId}`, m.token);
    // The gap is fixed per device too (read by the pacer before its first turn).
    await stack.redis.hset(keys.deviceSettings(m.deviceId), 'sendGapMs', String(GAP_MS));
  }
  const linkMs = performance.now() - linkStart;
  const poolId = `bench-${suffix}`;
  const created = await stack.adminApi(ADMIN_TOKEN, 'POST', '/pools', {
    id: poolId,
    name: 'Pool bench',
    devices: members.map((m) => m.deviceId),
  });
  if (created.status !== 201) throw new Error(`pool: ${created.status} ${JSON.stringify(created.body)}`);
  const tokenRes = await stack.adminApi<{ value: string }>(ADMIN_TOKEN, 'POST', '/tokens', {
    name: 'pool bench',
    poolId,
  });
  if (tokenRes.status !== 201) throw new Error(`token: ${tokenRes.status} ${JSON.stringify(tokenRes.body)}`);
  const poolToken = tokenRes.body.value;

  const batch = async (batchId: string): Promise<PoolBatch> => {
    const res = await stack.api<{ data: PoolBatch }>('GET', `/batches/${batchId}`, undefined, poolToken);
    if (res.status !== 200) throw new Error(`batch: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.data;
  };

  const recipients = Array.from({ length: RECIPIENTS }, (_, i) => `1555097${String(i).padStart(4, '0')}`);
  const sendStart = Date.now();
  const res = await stack.api<{ messageId: string; messageIds: string[] }>(
    'POST',
    '/send',
    { to: recipients, text: 'a pooled list, halfway through which two devices drop out' },
    poolToken,
  );
  if (res.status !== 202) throw new Error(`send: ${res.status} ${JSON.stringify(res.body)}`);
  const { messageId: batchId, messageIds } = res.body;
  const acceptMs = Date.now() - sendStart;

  await waitFor(async () => done((await batch(batchId)).counts) >= RECIPIENTS / 2, {
    timeoutMs: 600_000,
    intervalMs: 100,
    what: 'half of the list sent',
  });
  const [locked, loggedOut] = members as [(typeof members)[0], (typeof members)[0]];
  // The list just before the drop: no move has begun yet.
  const atDrop = await batch(batchId);
  const dropAt = Date.now();
  await stack.simApi('POST', '/faults/restrict', { phone: locked.phone, durationMs: LOCK_MS });
  await stack.simApi('POST', '/phone/unlink', { phone: loggedOut.phone });

  // The end: the devices left hold nothing, and what the dropped ones still hold stays still (the
  // mover, every MOVE_INTERVAL_MS, has nothing left to move).
  const left = members.slice(2).map((m) => m.deviceId);
  const dropped = [locked.deviceId, loggedOut.deviceId];
  let still = '';
  let stillSince = 0;
  await waitFor(
    async () => {
      const b = await batch(batchId);
      if (waiting(b.counts) === 0) return true;
      const of = (id: string) => b.devices.find((d) => d.deviceId === id);
      if (left.some((id) => waiting(of(id)?.counts ?? b.counts) > 0)) return false;
      const now = JSON.stringify(dropped.map((id) => of(id)?.counts));
      if (now !== still) [still, stillSince] = [now, Date.now()];
      return Date.now() - stillSince >= 10 * MOVE_INTERVAL_MS;
    },
    { timeoutMs: 600_000, intervalMs: 250, what: 'nothing queued on the devices left' },
  );
  const atEnd = await batch(batchId);
  // Held on the time-locked device: their send began there before the lock, so they wait for it.
  const heldAtEnd = waiting(atEnd.counts);
  let liftedWaitMs: number | undefined;
  if (heldAtEnd > 0) {
    const lifted = Date.now();
    await stack.simApi('DELETE', '/faults');
    await waitFor(async () => waiting((await batch(batchId)).counts) === 0, {
      timeoutMs: 120_000,
      intervalMs: 250,
      what: 'the held messages sent once the lock was lifted',
    }).catch(() => undefined);
    liftedWaitMs = Date.now() - lifted;
  }
  const final = await batch(batchId);

  // Every message read once, a few requests at a time.
  const records: MessageRecord[] = new Array<MessageRecord>(messageIds.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: READ_CONCURRENCY }, async () => {
      while (next < messageIds.length) {
        const i = next++;
        const r = await stack.api<{ data: MessageRecord }>(
          'GET',
          `/messages/${messageIds[i]}`,
          undefined,
          poolToken,
        );
        records[i] = r.status === 200 ? r.body.data : { status: `http ${r.status}` };
      }
    }),
  );
  const sentStates = new Set(['sent', 'delivered', 'read']);
  const lost = records.filter((r) => !sentStates.has(r.status ?? '') && r.status !== 'failed');
  const failedBy = new Map<string, number>();
  for (const r of records)
    if (r.status === 'failed') failedBy.set(r.error ?? '?', (failedBy.get(r.error ?? '?') ?? 0) + 1);
  const inboxes = recipients.map((p) => stack.sim.inbox(p).length);
  const twice = inboxes.filter((n) => n > 1).length;
  const sentNotReceived = records.filter((r, i) => sentStates.has(r.status ?? '') && inboxes[i] === 0).length;
  const failedReceived = records.filter((r, i) => r.status === 'failed' && inboxes[i]! > 0).length;

  // The devices left: their paced ideal after the drop against the time they took; beside it, the
  // same device's pace before the drop (its first send to its last before the drop): the baseline
  // of this run, which a loaded machine slows as much as the part after it.
  const pace = left.map((deviceId) => {
    const times = records
      .filter((r) => r.deviceId === deviceId && r.sentAt && sentStates.has(r.status ?? ''))
      .map((r) => Date.parse(r.sentAt!));
    const after = times.filter((t) => t > dropAt);
    const before = times.filter((t) => t <= dropAt);
    const idealMs = after.length * GAP_MS;
    const actualMs = Math.max(...after) - dropAt;
    const beforeRatio = ((before.length - 1) * GAP_MS) / (Math.max(...before) - Math.min(...before));
    return { deviceId, sent: after.length, idealMs, actualMs, ratio: idealMs / actualMs, beforeRatio };
  });
  const slowest = pace.reduce((a, b) => (b.ratio < a.ratio ? b : a));

  console.log(
    `${RECIPIENTS} new contacts in one list through a pool of ${DEVICES} devices, each paced at ${GAP_MS} ms ` +
      `(no jitter), the pool mover every ${MOVE_INTERVAL_MS} ms; ${process.env.BENCH_SOURCES === '1' ? 'sources through tsx' : 'built services'}; ` +
      `${process.version}; load average ${os.loadavg()[0]!.toFixed(1)} on ${os.cpus().length} cores`,
  );
  console.log(
    `  ${DEVICES} devices linked in ${seconds(linkMs)} (${seconds(linkMs / DEVICES)} each); list accepted in ${acceptMs} ms`,
  );
  console.log(
    `  drop after ${seconds(dropAt - sendStart)} with ${done(atDrop.counts)} sent: ${locked.deviceId} time-locked ` +
      `(${seconds(LOCK_MS)}), ${loggedOut.deviceId} logged out; the devices left sent their last ${seconds(Math.max(...pace.map((p) => p.actualMs)))} after it`,
  );
  for (const d of final.devices) {
    const role =
      d.deviceId === locked.deviceId
        ? ' (time-locked)'
        : d.deviceId === loggedOut.deviceId
          ? ' (logged out)'
          : '';
    console.log(
      `  ${d.deviceId}${role}: total ${d.total} (${atDrop.devices.find((x) => x.deviceId === d.deviceId)?.total ?? 0} at the drop), ` +
        `sent ${done(d.counts)}, failed ${d.counts.failed}, queued ${waiting(d.counts)}`,
    );
  }
  console.log(
    `  list: total ${final.total}, sent ${done(final.counts)}, failed ${final.counts.failed}, queued ${waiting(final.counts)}; ` +
      `moved ${final.moved}; state ${final.state}`,
  );
  if (heldAtEnd > 0)
    console.log(
      `  still held when the devices left were done: ${heldAtEnd} (${atEnd.devices
        .filter((d) => waiting(d.counts) > 0)
        .map((d) => `${d.deviceId} ${waiting(d.counts)}`)
        .join(', ')}: a send begun there before the drop never moves); ` +
        `the lock lifted, ${waiting(final.counts)} still queued ${seconds(liftedWaitMs!)} later`,
    );
  console.log(
    `  lost (neither sent nor failed): ${lost.length}${lost.length ? ` — ${JSON.stringify(lost.slice(0, 5))}` : ''}; ` +
      `sent twice (inbox > 1): ${twice}; sent but not in the inbox: ${sentNotReceived}; failed but received: ${failedReceived}`,
  );
  console.log(
    `  failed by reason: ${failedBy.size ? [...failedBy].map(([k, n]) => `${k} ${n}`).join(', ') : 'none'}`,
  );
  for (const p of pace)
    console.log(
      `  ${p.deviceId} after the drop: ${p.sent} sent, paced ideal ${seconds(p.idealMs)}, took ${seconds(p.actualMs)}: ` +
        `${p.ratio.toFixed(2)} of the ideal (before the drop ${p.beforeRatio.toFixed(2)}: after ÷ before ` +
        `${(p.ratio / p.beforeRatio).toFixed(2)})`,
    );
  console.log(
    `  slowest device left: ${slowest.ratio.toFixed(2)} of its paced ideal (goal ≥ ${GOAL}), ` +
      `${(slowest.ratio / slowest.beforeRatio).toFixed(2)} of its pace before the drop; ` +
      `${lost.length} lost, ${twice} twice (goal 0 and 0); whole run ${seconds(performance.now() - t0)}`,
  );
} finally {
  await stack.stop();
}
process.exit(0);
