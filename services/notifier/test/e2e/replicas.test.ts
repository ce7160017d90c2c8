import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { keys } from '@mgw/contracts';
import { Encryption, WebhookStore, publishEvent, webhookDeliveryKeys } from '@mgw/store';
import { RedisMonitor, WebhookReceiver, sleep, useStack, waitFor, type ReceivedDelivery } from '@mgw/testing';

/**
 * Two notifier processes serving one device: its deliveries go out one at a time, in emission
 * order, through a SIGKILL of the notifier serving it; an event after an idle spell is not held
 * back; Redis connections do not grow with devices.
 */
describe('e2e: webhooks with two notifiers (order, takeover after SIGKILL, idle latency, connections)', function () {
  this.timeout(360_000);
  const stack = useStack({
    notifier: true,
    sim: { receiptDelayMs: 0, readDelayMs: 20 },
    env: {
      ALLOWED_PRIVATE_HOSTS: '127.0.0.1',
      // The lease of a killed notifier lapses after WEBHOOK_TIMEOUT_MS + 5 s.
      WEBHOOK_TIMEOUT_MS: '2000',
      WEBHOOK_SWEEP_MS: '500',
      LOG_LEVEL: 'warn',
    },
  });
  const account = '15550800001';
  const list = Array.from({ length: 300 }, (_, i) => `1555081${String(i).padStart(4, '0')}`);
  let receiver: WebhookReceiver;
  let monitor: RedisMonitor | undefined;
  /** Event ids in the order the device's outbox received them (Redis MONITOR, Lua's XADDs). */
  const emitted: string[] = [];

  before(async () => {
    receiver = await WebhookReceiver.start();
    // Wide enough that two deliveries in flight at once would overlap at the receiver.
    receiver.delayMs = 2;
    await stack().startService('notifier');
    await stack().linkByQr(account, 'Replicas Account');
    const set = await stack().api<{ data: { secret: string } }>('PUT', '/webhook', { url: receiver.url });
    expect(set.status).to.equal(200);
    receiver.secrets = [set.body.data.secret];
    const outbox = keys.eventOutbox(stack().deviceId);
    monitor = await RedisMonitor.start(stack().redisUrl, (args) => {
      if (String(args[0]).toUpperCase() !== 'XADD' || args[1] !== outbox) return;
      const at = args.indexOf('id', args.indexOf('*'));
      if (at > 0) emitted.push(args[at + 1]!);
    });
  });
  after(async () => {
    monitor?.close();
    await receiver?.close();
  });

  const liveNotifiers = () =>
    stack().processes.filter(
      (p) => p.name.startsWith('notifier') && p.child.exitCode === null && p.child.signalCode === null,
    );
  const sendList = async () => {
    const res = await stack().api<{ messageId: string }>('POST', '/send', { to: list, text: 'in order' });
    expect(res.status, JSON.stringify(res.body)).to.equal(202);
    return res.body.messageId;
  };
  const ofDevice = (from: number) =>
    receiver.deliveries.slice(from).filter((d) => d.body.data.deviceId === stack().deviceId);
  const allArrived = async (ids: string[], from: number, what: string) => {
    await waitFor(
      async () => {
        const got = new Set(
          ofDevice(from)
            .filter((d) => d.status === 200)
            .map((d) => d.id),
        );
        return ids.every((id) => got.has(id));
      },
      { timeoutMs: 120_000, intervalMs: 100, what },
    );
  };

  /** Waits for the list's 300 reads; on a timeout says where the missing ones are. */
  const allRead = async (batchId: string) => {
    const reads = () =>
      new Set(
        receiver.events('message.read', (d) => d.batchId === batchId).map((d) => d.body.data.messageId),
      );
    try {
      await waitFor(async () => reads().size === 300, { timeoutMs: 120_000, what: '300 message.read' });
    } catch (err) {
      const k = webhookDeliveryKeys(stack().deviceId);
      const batch = await stack().api('GET', `/batches/${batchId}`);
      const retries = await stack().redis.zrange(k.retries, 0, -1, 'WITHSCORES');
      const failedAttempts = ofDevice(0).filter((d) => d.status !== 200).length;
      throw new Error(
        `${(err as Error).message}: ${reads().size} reads received; the store: ${JSON.stringify(batch.body)}; ` +
          `outbox ${await stack().redis.xlen(k.outbox)} entries, retries ${JSON.stringify(retries)}, ` +
          `lease ${await stack().redis.get(k.lease)}, non-200 answers ${failedAttempts}, ` +
          `notifiers alive ${liveNotifiers().length}`,
      );
    }
  };

  it('When a list of 300 is sent with two notifiers running, then every delivery of the device comes one at a time, in emission order', async () => {
    expect(liveNotifiers()).to.have.length(2);
    const from = receiver.deliveries.length;
    emitted.length = 0;
    const batchId = await sendList();
    await waitFor(async () => receiver.events('batch.completed', (d) => d.batchId === batchId).length === 1, {
      timeoutMs: 120_000,
      what: 'batch.completed',
    });
    await allRead(batchId);
    await allArrived([...emitted], from, 'every emitted event delivered');
    const seen = ofDevice(from);
    const report = serial(seen);
    expect(report.overlaps, 'deliveries in flight at once').to.equal(0);
    expect(report.order, 'accepted ids, repeats collapsed').to.deep.equal(
      emitted.slice(0, report.order.length),
    );
    expect(report.order).to.have.length(emitted.length);
    expect(report.repeats).to.equal(0);
    expect(emitted.length).to.be.at.least(901);
    for (const d of seen) expect(d.verifiedWith).to.equal(receiver.secrets[0]);
  });

  it('When the device has been idle for 10 s, then its next event arrives at once, not left to the sweep', async () => {
    await sleep(10_000);
    const from = receiver.deliveries.length;
    const t0 = Date.now();
    await publishEvent(stack().redis, stack().deviceId, 'session.status', { status: 'connected' });
    await waitFor(async () => ofDevice(from).length === 1, {
      timeoutMs: 10_000,
      intervalMs: 5,
      what: 'the event',
    });
    const latency = ofDevice(from)[0]!.startedAt - t0;
    // The goal (p99 ≤ 500 ms after 10 s idle) is the webhooks bench's (docs/benchmarks.md, 48-58 ms
    // quiet); here 10 x and more that, far under the 60 s sweep.
    expect(latency, `emission → delivery ${latency.toFixed(0)} ms`).to.be.below(5000); // quiet: 60 ms
  });

  it('When devices go from 1 to 50, then the Redis connections of the notifiers stay the same', async () => {
    const count = async () =>
      String(await (stack().redis as Redis).client('LIST'))
        .split('\n')
        .filter((line) => / name=mgw-notifier(\s|-)/.test(line)).length;
    const before = await count();
    expect(before).to.be.at.most(3 * liveNotifiers().length);
    const webhooks = new WebhookStore(stack().redis, Encryption.fromEnv(), 0);
    const devices = Array.from(
      { length: 50 },
      (_, i) => `conn-${i}-${Math.random().toString(36).slice(2, 6)}`,
    );
    for (const d of devices) await webhooks.set(d, { url: receiver.url });
    const from = receiver.deliveries.length;
    for (const d of devices) await publishEvent(stack().redis, d, 'session.status', { status: 'connected' });
    await waitFor(
      async () => new Set(receiver.deliveries.slice(from).map((d) => d.body.data.deviceId)).size >= 50,
      {
        timeoutMs: 30_000,
        what: 'an event delivered to each of 50 devices',
      },
    );
    expect(await count()).to.equal(before);
    for (const d of devices) await webhooks.remove(d);
  });

  it('When the notifier serving the device is killed with SIGKILL mid-stream, then the other takes over: nothing lost, order kept, a repeat only of the attempt cut off', async () => {
    const from = receiver.deliveries.length;
    emitted.length = 0;
    const batchId = await sendList();
    await waitFor(async () => ofDevice(from).length >= 150, { timeoutMs: 60_000, what: '150 deliveries' });
    const lease = webhookDeliveryKeys(stack().deviceId).lease;
    let holder: ReturnType<typeof liveNotifiers>[number] | undefined;
    await waitFor(
      async () => {
        const token = (await stack().redis.get(lease)) ?? '';
        const pid = Number(/-(\d+):\d+$/.exec(token)?.[1]);
        holder = liveNotifiers().find((p) => p.child.pid === pid);
        return holder !== undefined;
      },
      { timeoutMs: 10_000, intervalMs: 2, what: 'the notifier holding the lease' },
    );
    holder!.child.kill('SIGKILL');
    await holder!.exited;
    await waitFor(async () => receiver.events('batch.completed', (d) => d.batchId === batchId).length === 1, {
      timeoutMs: 120_000,
      what: 'batch.completed after the takeover',
    });
    await allRead(batchId);
    await allArrived([...emitted], from, 'every emitted event delivered after the takeover');
    await sleep(500);
    const report = serial(ofDevice(from));
    expect(report.overlaps, 'deliveries in flight at once').to.equal(0);
    expect(report.order).to.deep.equal(emitted);
    // Only the attempt the kill cut off may come again (same webhook-id, right after itself).
    expect(report.repeats).to.be.at.most(1);
    console.log(`      (${emitted.length} events; ${report.repeats} repeated after the SIGKILL)`);
  });
});

/**
 * Whether deliveries came one at a time (each began after the previous one's answer) and their
 * order: the accepted ids with a delivery repeated right after itself (the same webhook-id sent
 * again) collapsed and counted.
 */
function serial(deliveries: ReceivedDelivery[]) {
  const sorted = [...deliveries].sort((a, b) => a.startedAt - b.startedAt);
  let overlaps = 0;
  for (let i = 1; i < sorted.length; i++) if (sorted[i]!.startedAt < sorted[i - 1]!.endedAt) overlaps++;
  const order: string[] = [];
  let repeats = 0;
  for (const d of sorted) {
    if (d.status < 200 || d.status >= 300) continue;
    if (order.at(-1) === d.id) repeats++;
    else order.push(d.id);
  }
  return { overlaps, order, repeats };
}
