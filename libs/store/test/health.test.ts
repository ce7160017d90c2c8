import { expect } from 'chai';
import { Redis } from 'ioredis';
import { validateEnv } from '@mgw/common';
import { keys } from '@mgw/contracts';
import {
  HEALTH_WINDOW_HOURS,
  SEND_POLICY_ENV,
  deviceHealth,
  healthCounts,
  HealthWindow,
  markRestricted,
  recordHealthSignal,
  scoreHealth,
  sendPolicyConfig,
  type HealthSignals,
} from '../src/policy/index.js';

const calm: HealthSignals = {
  refused463: 0,
  rateLimited: 0,
  rejected: 0,
  reconnects: 0,
  logouts: 0,
  sentToday: 0,
  firstContactsToday: 0,
};
const codes = (s: Partial<HealthSignals>) => scoreHealth({ ...calm, ...s }, 24).reasons.map((r) => r.code);
const score = (s: Partial<HealthSignals>) => scoreHealth({ ...calm, ...s }, 24).score;

describe('store: the health score of a device (the formula)', () => {
  it('When nothing happened, then the score is 100 with no reasons', () => {
    expect(scoreHealth(calm, 24)).to.deep.equal({ score: 100, reasons: [] });
  });

  it('When a pause is in force, then it costs by its reason: time lock 50, capped 40, 429 or failures 15', () => {
    expect(score({ restriction: 'reachout_timelock' })).to.equal(50);
    expect(score({ restriction: 'account_restricted' })).to.equal(60);
    expect(score({ restriction: 'rate_limited' })).to.equal(85);
    expect(score({ restriction: 'repeated_failures' })).to.equal(85);
    expect(codes({ restriction: 'account_restricted' })).to.deep.equal(['capped']);
    expect(codes({ restriction: 'reachout_timelock' })).to.deep.equal(['reachout_timelock']);
  });

  it('When refusals happened in the window, then each costs its weight up to its ceiling', () => {
    expect(score({ refused463: 1 })).to.equal(90);
    expect(score({ refused463: 3 })).to.equal(70);
    expect(score({ refused463: 50 })).to.equal(60);
    expect(score({ rateLimited: 2 })).to.equal(90);
    expect(score({ rateLimited: 9 })).to.equal(80);
    expect(score({ rejected: 3 })).to.equal(94);
    expect(score({ rejected: 100 })).to.equal(80);
    const { reasons } = scoreHealth({ ...calm, refused463: 2 }, 24);
    expect(reasons).to.deep.equal([
      { code: 'refusals_463', penalty: 20, message: '2 refusals (ack 463) in the last 24 h' },
    ]);
  });

  it('When the socket reconnected, then the first two are free and the rest cost 3 each up to 15', () => {
    expect(score({ reconnects: 2 })).to.equal(100);
    expect(score({ reconnects: 3 })).to.equal(97);
    expect(score({ reconnects: 40 })).to.equal(85);
  });

  it('When the account was logged out, then each logout costs 30, at most 60', () => {
    expect(score({ logouts: 1 })).to.equal(70);
    expect(score({ logouts: 5 })).to.equal(40);
    expect(scoreHealth({ ...calm, logouts: 1 }, 24).reasons[0]!.message).to.equal(
      '1 logout in the last 24 h',
    );
  });

  it('When most of today went to new contacts, then the share over half costs up to 20, once 10 messages were sent', () => {
    expect(score({ sentToday: 9, firstContactsToday: 9 })).to.equal(100);
    expect(score({ sentToday: 10, firstContactsToday: 5 })).to.equal(100);
    expect(score({ sentToday: 10, firstContactsToday: 10 })).to.equal(80);
    expect(score({ sentToday: 100, firstContactsToday: 75 })).to.equal(90);
    expect(scoreHealth({ ...calm, sentToday: 20, firstContactsToday: 20 }, 24).reasons).to.deep.equal([
      { code: 'new_contact_ratio', penalty: 20, message: "100% of today's 20 messages went to new contacts" },
    ]);
  });

  it('When everything goes wrong at once, then the score stops at 0 and the reasons come costliest first', () => {
    const all = scoreHealth(
      { ...calm, restriction: 'reachout_timelock', refused463: 9, logouts: 2, reconnects: 9, rateLimited: 1 },
      24,
    );
    expect(all.score).to.equal(0);
    expect(all.reasons.map((r) => r.code)).to.deep.equal([
      'logouts',
      'reachout_timelock',
      'refusals_463',
      'reconnects',
      'rate_limits_429',
    ]);
    expect(all.reasons.map((r) => r.penalty)).to.deep.equal([60, 50, 40, 15, 5]);
  });
});

describe('store: the health signals of a device (counted per hour in its slot; real Redis)', () => {
  let redis: Redis;
  const device = () => `health-${Math.random().toString(36).slice(2, 8)}`;
  const config = sendPolicyConfig(validateEnv([SEND_POLICY_ENV], {}));
  const HOUR = 3_600_000;
  before(() => {
    redis = new Redis(process.env.REDIS_URL!);
  });
  after(async () => {
    await redis.quit();
  });

  it('When signals are counted, then the window sums them, the hour key expires after the window, and older hours are left out', async () => {
    const id = device();
    const now = Date.parse('2026-11-24T12:30:00Z');
    await recordHealthSignal(redis, id, 'refused463', now);
    await recordHealthSignal(redis, id, 'refused463', now - 5 * HOUR);
    await recordHealthSignal(redis, id, 'reconnects', now - (HEALTH_WINDOW_HOURS - 1) * HOUR);
    await recordHealthSignal(redis, id, 'logouts', now - HEALTH_WINDOW_HOURS * HOUR);
    const ttl = await redis.ttl(keys.deviceHealth(id, new Date(now).toISOString()));
    expect(ttl).to.be.within(HEALTH_WINDOW_HOURS * 3600, (HEALTH_WINDOW_HOURS + 1) * 3600);
    expect(await healthCounts(redis, id, now)).to.deep.equal({
      refused463: 2,
      rateLimited: 0,
      rejected: 0,
      reconnects: 1,
      logouts: 0,
    });
  });

  it("When a window is read again and again (the sender's gauges), then it reads the closed hours once an hour and sums as healthCounts does", async () => {
    const id = device();
    const now = Date.parse('2026-11-24T12:30:00Z');
    await recordHealthSignal(redis, id, 'refused463', now - 5 * HOUR);
    await recordHealthSignal(redis, id, 'reconnects', now - (HEALTH_WINDOW_HOURS - 1) * HOUR);
    const hmgets: number[] = [];
    const counting = new Proxy(redis, {
      get(target, prop, receiver) {
        if (prop !== 'pipeline') return Reflect.get(target, prop, receiver) as unknown;
        return () => {
          const pipe = target.pipeline();
          const exec = pipe.exec.bind(pipe);
          pipe.exec = (() => {
            hmgets.push(pipe.length);
            return exec();
          }) as typeof pipe.exec;
          return pipe;
        };
      },
    });
    const window = new HealthWindow(counting, id);
    expect(await window.counts(now)).to.deep.equal(await healthCounts(redis, id, now));
    // A signal in the current hour shows at once; the closed hours are not read again.
    await recordHealthSignal(redis, id, 'rateLimited', now + 60_000);
    expect(await window.counts(now + 120_000)).to.deep.equal(await healthCounts(redis, id, now + 120_000));
    expect(hmgets).to.deep.equal([HEALTH_WINDOW_HOURS - 1, 1, 1]);
    // The next hour: the window moves (the oldest hour leaves it), read whole once more.
    const next = now + HOUR;
    expect(await window.counts(next)).to.deep.equal(await healthCounts(redis, id, next));
    expect((await window.counts(next)).reconnects).to.equal(0);
    expect(hmgets).to.deep.equal([HEALTH_WINDOW_HOURS - 1, 1, 1, HEALTH_WINDOW_HOURS - 1, 1, 1]);
  });

  it('When a device is capped by WhatsApp after a refusal, then its health reads both from Redis', async () => {
    const id = device();
    const now = Date.now();
    expect(await deviceHealth(redis, id, config, now)).to.deep.equal({ score: 100, reasons: [] });
    await recordHealthSignal(redis, id, 'refused463', now);
    await markRestricted(redis, id, 'account_restricted', now + 60_000, now);
    const health = await deviceHealth(redis, id, config, now);
    expect(health.score).to.equal(50);
    expect(health.reasons.map((r) => [r.code, r.penalty])).to.deep.equal([
      ['capped', 40],
      ['refusals_463', 10],
    ]);
  });
});
