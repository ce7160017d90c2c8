/**
 * The connect gate (a restart without a storm) on real Redis: many devices wanting their sockets at
 * once are admitted no faster than the sender's bound and, across two senders, the host's bound
 * (the bucket in Redis they share), an OTP's device first, then devices with messages, then idle
 * ones, each class in the order they came.
 */
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { createMetrics, PRIORITY } from '@mgw/contracts';
import { createLogger } from '@mgw/common';
import { ConnectBucket } from '@mgw/store';
import { openTestSendQueue, sendJobData, sendJobOptions } from '@mgw/testing';
import { ConnectGate, connectClassOf, type ConnectClass } from '../src/fleet/connect-gate.js';

const logger = createLogger({ level: 'silent', service: 'connect-gate-test' });

/** The most admissions found in any window of `windowMs` starting at an admission. */
function peakIn(times: number[], windowMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let peak = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (j < sorted.length && sorted[j]! < sorted[i]! + windowMs) j++;
    peak = Math.max(peak, j - i);
  }
  return peak;
}

/** Puts `count` devices of class `cls` in line; resolves with the time each was admitted. */
async function line(
  gate: ConnectGate,
  prefix: string,
  count: number,
  cls: ConnectClass = 'idle',
  order?: string[],
): Promise<Promise<number>[]> {
  const entered = await Promise.all(
    Array.from({ length: count }, (_, i) =>
      gate.enter(`${prefix}-${i}`, async () => cls, new AbortController().signal),
    ),
  );
  return entered.map(({ admitted }, i) =>
    admitted.then((ok) => {
      expect(ok).to.equal(true);
      order?.push(`${prefix}-${i}`);
      return Date.now();
    }),
  );
}

describe('sender: the connect gate admits socket opens at a bounded rate, by priority', function () {
  this.timeout(30_000);
  let redis: Redis;
  const scope = `test-${Math.random().toString(36).slice(2, 8)}`;

  before(() => {
    redis = new Redis(process.env.REDIS_URL!);
  });
  after(async () => {
    await redis.del(`mgw:connect-bucket:${scope}`, `mgw:connect-bucket:${scope}-2`);
    redis.disconnect();
  });

  it('When 30 devices of one sender want to connect at once, then never more than its rate a second (plus its burst) are admitted', async () => {
    const metrics = createMetrics();
    const gate = new ConnectGate({ perSender: { ratePerSecond: 10, burst: 2 }, metrics, logger });
    const started = Date.now();
    const times = await Promise.all(await line(gate, 'one', 30));
    // 2 at once, then 28 at 10 a second (2.8 s): not before, and not far behind that schedule.
    expect(Date.now() - started - 2800, 'behind the schedule').to.be.within(-200, 1000); // quiet: 25 ms
    expect(peakIn(times, 1000)).to.be.at.most(10 + 2);
    const admitted = await metrics.registry.getSingleMetricAsString('mgw_connect_admitted_total');
    expect(admitted).to.include('mgw_connect_admitted_total{priority="idle"} 30');
    expect((await metrics.connectWaiting.get()).values[0]?.value).to.equal(0);
    expect(
      (await metrics.connectWaitSeconds.get()).values.find((v) => v.metricName?.endsWith('_count'))?.value,
    ).to.equal(30);
  });

  it('When two senders each want 20 sockets at once, then together they stay within the host rate (the bucket in Redis they share)', async () => {
    const host = () => new ConnectBucket(redis, scope, { ratePerSecond: 8, burst: 2 });
    // Each sender alone would admit all of its devices at once.
    const a = new ConnectGate({ perSender: { ratePerSecond: 0, burst: 1 }, host: host(), logger });
    const b = new ConnectGate({ perSender: { ratePerSecond: 0, burst: 1 }, host: host(), logger });
    const started = Date.now();
    const [ta, tb] = await Promise.all([line(a, 'a', 20), line(b, 'b', 20)]);
    const times = await Promise.all([...ta!, ...tb!]);
    // 2 at once, then 38 at 8 a second (~4.75 s): not before, and not far behind that schedule.
    expect(Date.now() - started - 4750, 'behind the schedule').to.be.within(-550, 1000); // quiet: 55 ms
    expect(peakIn(times, 1000)).to.be.at.most(8 + 2);
    // Both senders were served, not one after the other.
    const firstHalf = times.filter((t) => t < started + 2500);
    expect(firstHalf.length).to.be.above(4);
    expect(await redis.pttl(`mgw:connect-bucket:${scope}`)).to.be.above(0);
  });

  it('When the sender rate is lower than the host rate, then the sender rate is the bound; when higher, the host rate is', async () => {
    const slow = new ConnectGate({
      perSender: { ratePerSecond: 4, burst: 1 },
      host: new ConnectBucket(redis, `${scope}-2`, { ratePerSecond: 50, burst: 50 }),
      logger,
    });
    const times = await Promise.all(await line(slow, 'slow', 9));
    expect(peakIn(times, 1000)).to.be.at.most(4 + 1);
    expect(Math.max(...times) - Math.min(...times)).to.be.at.least(1800);
  });

  it('When devices wait, then an OTP device goes first, then devices with messages, then idle ones, each in the order it came', async () => {
    const gate = new ConnectGate({ perSender: { ratePerSecond: 50, burst: 1 }, logger });
    const order: string[] = [];
    // Put in line during a scan (held), idle ones first: the OTP devices came last.
    const release = gate.hold();
    const idle = await line(gate, 'idle', 6, 'idle', order);
    const queued = await line(gate, 'queued', 3, 'queued', order);
    const otp = await line(gate, 'otp', 2, 'otp', order);
    release();
    await Promise.all([...idle, ...queued, ...otp]);
    expect(order).to.deep.equal([
      'otp-0',
      'otp-1',
      'queued-0',
      'queued-1',
      'queued-2',
      ...Array.from({ length: 6 }, (_, i) => `idle-${i}`),
    ]);
  });

  it('When an idle device waiting in line gets an OTP queued, then it moves ahead of the other idle ones', async () => {
    const gate = new ConnectGate({ perSender: { ratePerSecond: 5, burst: 1 }, reclassifyMs: 150, logger });
    const order: string[] = [];
    let late: ConnectClass = 'idle';
    const waits = await line(gate, 'idle', 6, 'idle', order);
    const { admitted } = await gate.enter('late', async () => late, new AbortController().signal);
    late = 'otp';
    await admitted;
    order.push('late');
    await Promise.all(waits);
    // One admitted at once, perhaps a second before the class was read again; then the OTP.
    expect(order.indexOf('late')).to.be.at.most(2);
  });

  it('When a device stops waiting (hand-over, stop), then it is not admitted and takes no token', async () => {
    // One token a second: taken by the device that left, the next one's would come a second later.
    const gate = new ConnectGate({ perSender: { ratePerSecond: 1, burst: 1 }, logger });
    const first = await gate.enter('first', async () => 'idle', new AbortController().signal);
    const leaving = new AbortController();
    const gone = await gate.enter('gone', async () => 'otp', leaving.signal);
    const next = await gate.enter('next', async () => 'idle', new AbortController().signal);
    expect(await first.admitted).to.equal(true);
    const since = Date.now();
    leaving.abort();
    expect(await gone.admitted).to.equal(false);
    expect(await next.admitted).to.equal(true);
    // The next token went to `next` (1 s after the first), not one later.
    expect(Date.now() - since - 1000, 'behind its token').to.be.below(700); // quiet: 5 ms
    expect(gate.size).to.equal(0);
  });

  it('When the sender is busy past the host timeout while the host bucket answers, then that answer holds: no socket opens without its token', async () => {
    // The host's answer is on the wire when the sender's event loop is held for 2.5 s (a scan
    // claiming a thousand devices): the 2 s timeout is due by then too. The answer (wait 50 ms)
    // must win; a timeout that fired first would admit the device by the sender's rate alone.
    const warnings: string[] = [];
    const watching = Object.assign(Object.create(logger) as typeof logger, {
      warn: (msg: string) => warnings.push(msg),
    });
    let takes = 0;
    const host = {
      take: (): Promise<number> => {
        takes++;
        if (takes > 1) return Promise.resolve(0);
        const answer = redis.ping().then(() => 50);
        return new Promise((resolve) =>
          setImmediate(() => {
            const until = Date.now() + 2500;
            while (Date.now() < until) {
              // the busy loop: Redis answers meanwhile, the timer falls due
            }
            resolve(answer);
          }),
        );
      },
    };
    const gate = new ConnectGate({ perSender: { ratePerSecond: 0, burst: 1 }, host, logger: watching });
    const { admitted } = await gate.enter('busy', async () => 'idle', new AbortController().signal);
    expect(await admitted).to.equal(true);
    expect(takes, 'the answer said wait, and the device took a token after it').to.equal(2);
    expect(warnings).to.deep.equal([]);
  });

  it("When a device's queue holds an OTP, messages (waiting or scheduled) or nothing, then its class is otp, queued or idle", async () => {
    const deviceId = `class-${Math.random().toString(36).slice(2, 8)}`;
    const q = await openTestSendQueue(deviceId);
    try {
      expect(await connectClassOf(q.queue)).to.equal('idle');
      const scheduled = sendJobData(deviceId);
      await q.queue.add('send', scheduled, sendJobOptions(scheduled, PRIORITY.send, 3_600_000));
      expect(await connectClassOf(q.queue)).to.equal('queued');
      const send = sendJobData(deviceId);
      await q.queue.add('send', send, sendJobOptions(send, PRIORITY.send));
      expect(await connectClassOf(q.queue)).to.equal('queued');
      const otp = sendJobData(deviceId, { kind: 'otp' });
      await q.queue.add('otp', otp, sendJobOptions(otp, PRIORITY.otp));
      expect(await connectClassOf(q.queue)).to.equal('otp');
    } finally {
      await q.close();
    }
  });
});
