import { expect } from 'chai';
import { Redis } from 'ioredis';
import { validateEnv } from '@mgw/common';
import {
  SEND_POLICY_ENV,
  admitMessage,
  capOf,
  capWindow,
  capWithoutReserve,
  clearRestriction,
  getRestriction,
  markRestricted,
  policyOverrideSchema,
  quietUntil,
  readOverrides,
  releaseMessage,
  rememberChats,
  sendPolicyConfig,
  sendingView,
  writeOverrides,
  type SendPolicy,
} from '../src/policy/index.js';

const DAY = 86_400_000;
const base: SendPolicy = {
  dailyCap: 100,
  warmupCaps: [],
  firstContactCap: 0,
  otpReserve: 0,
  timeZone: 'UTC',
};

describe('store: the sending policy (windows, warm-up, quiet hours, counters, restriction; real Redis)', () => {
  let redis: Redis;
  const device = () => `pol-${Math.random().toString(36).slice(2, 8)}`;
  before(() => {
    redis = new Redis(process.env.REDIS_URL!);
  });
  after(async () => {
    await redis.quit();
  });

  it('When the defaults are read from an empty environment, then they are the documented ones', () => {
    const c = sendPolicyConfig(validateEnv([SEND_POLICY_ENV], {}));
    expect(c.defaults).to.deep.equal({
      dailyCap: 1000,
      warmupCaps: [50, 100, 200, 400, 700],
      firstContactCap: 10,
      otpReserve: 0.1,
      quietHours: undefined,
      timeZone: 'UTC',
    });
    expect(c.windowMs).to.equal(DAY);
    expect(() => validateEnv([SEND_POLICY_ENV], { SEND_TIME_ZONE: 'Mars/Olympus' })).to.throw(/IANA/);
    expect(() => validateEnv([SEND_POLICY_ENV], { SEND_QUIET_HOURS: '25:00-07:00' })).to.throw(/22:00-07:00/);
  });

  it('When the day is counted in a time zone, then it starts at local midnight (also across a DST change)', () => {
    // 2026-03-29 01:30 UTC is 03:30 in Berlin (CEST, +2, the day clocks went forward).
    const now = Date.UTC(2026, 2, 29, 1, 30);
    const w = capWindow(now, DAY, 'Europe/Berlin');
    expect(new Date(w.start).toISOString()).to.equal('2026-03-28T22:00:00.000Z');
    const utc = capWindow(now, DAY, 'UTC');
    expect(new Date(utc.start).toISOString()).to.equal('2026-03-29T00:00:00.000Z');
    expect(capWindow(now, 60_000, 'Europe/Berlin')).to.deep.equal({ start: now, end: now + 60_000 });
  });

  it('When the clock moves on, within the same minute and across the minute of a DST change, then each moment reads its own local time', () => {
    // Berlin's clocks went forward at 2026-03-29 01:00 UTC (02:00 CET -> 03:00 CEST); a time zone's
    // offset is kept for the minute it was read in, so moments on both sides must still differ.
    const p = { ...base, quietHours: { start: 2 * 60 + 59, end: 3 * 60 + 1 }, timeZone: 'Europe/Berlin' };
    const before = Date.UTC(2026, 2, 29, 0, 59, 30); // 01:59:30 CET: outside
    const sameMinute = Date.UTC(2026, 2, 29, 0, 59, 59); // 01:59:59 CET: outside
    const after = Date.UTC(2026, 2, 29, 1, 0, 0); // 03:00:00 CEST: inside, until 03:01
    expect(quietUntil(before, p)).to.equal(undefined);
    expect(quietUntil(sameMinute, p)).to.equal(undefined);
    expect(new Date(quietUntil(after, p)!).toISOString()).to.equal('2026-03-29T01:01:00.000Z');
    // ...and back to a moment of an earlier minute (another device's clock, a test's): not the cached one.
    expect(quietUntil(before, p)).to.equal(undefined);
    expect(new Date(capWindow(after, DAY, 'Europe/Berlin').start).toISOString()).to.equal(
      '2026-03-28T22:00:00.000Z',
    );
  });

  it('When quiet hours span midnight, then a time inside them waits until their end, a time outside does not', () => {
    const p = { ...base, quietHours: { start: 22 * 60, end: 7 * 60 }, timeZone: 'Asia/Tokyo' };
    // 23:15 in Tokyo (+9) = 14:15 UTC: quiet until 07:00 Tokyo = 22:00 UTC.
    const inside = Date.UTC(2026, 5, 1, 14, 15);
    expect(new Date(quietUntil(inside, p)!).toISOString()).to.equal('2026-06-01T22:00:00.000Z');
    expect(quietUntil(Date.UTC(2026, 5, 1, 3, 0), p)).to.equal(undefined); // 12:00 Tokyo
  });

  it('When the account was linked days ago, then the warm-up step of that day is the cap, then the daily cap', () => {
    const p = { ...base, warmupCaps: [10, 20, 500] };
    const linked = Date.UTC(2026, 0, 1, 18);
    const day = (n: number) => capWindow(linked + n * DAY, DAY, 'UTC').start;
    expect(capOf(p, day(0), DAY, linked)).to.deep.equal({ cap: 10, warmupDay: 1 });
    expect(capOf(p, day(1), DAY, linked)).to.deep.equal({ cap: 20, warmupDay: 2 });
    expect(capOf(p, day(2), DAY, linked).cap).to.equal(100); // the daily cap bounds a step
    expect(capOf(p, day(3), DAY, linked)).to.deep.equal({ cap: 100, warmupDay: undefined });
    expect(capOf({ ...p, dailyCap: 0 }, day(5), DAY, linked).cap).to.equal(Infinity);
    expect(capWithoutReserve(10, 0.1)).to.equal(9);
    expect(capWithoutReserve(1, 0.2)).to.equal(1);
  });

  it('When messages are admitted, then the caps hold, a known chat is no first contact, and a release gives the unit back', async () => {
    const d = device();
    const w = 1_000_000;
    expect(await admitMessage(redis, d, '1555000001', w, DAY, 2, 1)).to.deep.equal({ ok: true, first: true });
    expect(await admitMessage(redis, d, '1555000002', w, DAY, 2, 1)).to.deep.equal({
      ok: false,
      cap: 'first_contact_cap',
    });
    await rememberChats(redis, d, ['1555000002']);
    expect(await admitMessage(redis, d, '1555000002', w, DAY, 2, 1)).to.deep.equal({
      ok: true,
      first: false,
    });
    expect(await admitMessage(redis, d, '1555000003', w, DAY, 2, 1)).to.deep.equal({
      ok: false,
      cap: 'daily_cap',
    });
    await releaseMessage(redis, d, w, false);
    expect((await admitMessage(redis, d, '1555000002', w, DAY, 2, 1)).ok).to.equal(true);
    expect(await redis.pttl(`mgw:{${d}}:usage:${w}`)).to.be.within(DAY, 2 * DAY);
  });

  it('When a restriction is marked twice, then the later end wins and it started once; clearing ends it', async () => {
    const d = device();
    const now = Date.now();
    const first = await markRestricted(redis, d, 'rate_limited', now + 60_000, now);
    expect(first.started).to.equal(true);
    const second = await markRestricted(redis, d, 'reachout_timelock', now + 120_000, now + 1);
    expect(second).to.deep.include({ started: false });
    expect(second.restriction).to.deep.equal({
      reason: 'reachout_timelock',
      until: now + 120_000,
      since: now,
    });
    expect(await getRestriction(redis, d, now + 121_000)).to.equal(undefined);
    expect(await clearRestriction(redis, d)).to.equal(true);
    expect(await getRestriction(redis, d)).to.equal(undefined);
  });

  it('When overrides are written and removed, then the view shows them and the defaults come back', async () => {
    const d = device();
    const config = sendPolicyConfig(validateEnv([SEND_POLICY_ENV], { SEND_WARMUP_CAPS: 'off' }));
    const o = policyOverrideSchema.validate({
      dailyCap: 7,
      quietHours: '23:00-06:00',
      timeZone: 'America/Chicago',
    });
    expect(o.error).to.equal(undefined);
    await writeOverrides(redis, d, o.value);
    expect(await readOverrides(redis, d)).to.deep.equal({
      dailyCap: 7,
      quietHours: '23:00-06:00',
      timeZone: 'America/Chicago',
    });
    const view = await sendingView(redis, d, config);
    expect(view).to.include({
      dailyCap: 7,
      sentToday: 0,
      quietHours: '23:00-06:00',
      timeZone: 'America/Chicago',
    });
    await writeOverrides(redis, d, { dailyCap: null, quietHours: null, timeZone: null });
    expect(await sendingView(redis, d, config)).to.include({ dailyCap: 1000, timeZone: 'UTC' });
    expect(policyOverrideSchema.validate({ otpReserve: 0.9 }).error).to.not.equal(undefined);
    expect(policyOverrideSchema.validate({}).error).to.not.equal(undefined);
  });
});
