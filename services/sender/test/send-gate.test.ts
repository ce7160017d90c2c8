/**
 * The send gate's bookkeeping of chats on real Redis: a message that went out makes its number a
 * chat (no first contact any more), written only when the number was not one already.
 */
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { createMetrics, keys } from '@mgw/contracts';
import { SUSPENDED_RECHECK_MS, SendGate } from '../src/send/send-gate.js';

describe('sender: the send gate keeps the chats the account has', function () {
  let redis: Redis;
  let sadds: string[][];
  let gate: SendGate;
  let deviceId: string;

  before(() => {
    redis = new Redis(process.env.REDIS_URL!);
  });
  after(() => redis.disconnect());
  // Each test its own device; its chats and usage counters are removed after it.
  afterEach(async () => {
    const left = await redis.keys(`*{${deviceId}}*`);
    if (left.length) await redis.del(...left);
  });
  beforeEach(() => {
    deviceId = `gate-${Math.random().toString(36).slice(2, 8)}`;
    sadds = [];
    // The real client, each SADD it is asked for noted on the way.
    const counting = new Proxy(redis, {
      get(target, prop, receiver) {
        if (prop === 'sadd')
          return (key: string, ...members: string[]) => {
            sadds.push([key, ...members]);
            return target.sadd(key, ...members);
          };
        const value: unknown = Reflect.get(target, prop, receiver);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    gate = new SendGate(
      counting,
      deviceId,
      {
        defaults: { dailyCap: 0, warmupCaps: [], firstContactCap: 1, otpReserve: 0, timeZone: 'UTC' },
        windowMs: 86_400_000,
      },
      createMetrics(),
    );
  });

  const sendTo = async (to: string) => {
    const verdict = await gate.admit({ to, kind: 'send' });
    if (!('go' in verdict)) throw new Error(`held: ${verdict.reason}`);
    await verdict.go.sent();
  };

  it('When a first message to a number goes out, then the number becomes a chat, and later messages to it are no first contacts and write nothing more', async () => {
    await sendTo('15550810001');
    expect(await redis.sismember(keys.deviceChats(deviceId), '15550810001')).to.equal(1);
    expect(sadds).to.deep.equal([[keys.deviceChats(deviceId), '15550810001']]);

    // The first-contact cap (1) is used up: the same number still goes, a stranger is held.
    await sendTo('15550810001');
    await sendTo('15550810001');
    expect(sadds, 'a known chat is not written again').to.have.length(1);
    expect(await redis.scard(keys.deviceChats(deviceId))).to.equal(1);
    const stranger = await gate.admit({ to: '15550810009', kind: 'send' });
    expect(stranger).to.include({ reason: 'first_contact_cap' });
  });

  it('When the number wrote to the account first, then a message to it is no first contact and adds nothing', async () => {
    await redis.sadd(keys.deviceChats(deviceId), '15550810002');
    sadds = [];
    await sendTo('15550810002');
    expect(sadds).to.deep.equal([]);
    await sendTo('15550810003');
    expect(sadds).to.deep.equal([[keys.deviceChats(deviceId), '15550810003']]);
  });

  it("When the device's workspace is suspended, then every message is held (OTPs too) for the recheck interval and takes nothing from the caps", async () => {
    let suspended = true;
    const held = new SendGate(
      redis,
      deviceId,
      {
        defaults: { dailyCap: 1, warmupCaps: [], firstContactCap: 1, otpReserve: 0, timeZone: 'UTC' },
        windowMs: 86_400_000,
      },
      createMetrics(),
      () => 1_000_000,
      { deviceSuspended: async (d) => d === deviceId && suspended },
    );
    for (const kind of ['send', 'otp'] as const) {
      const verdict = await held.admit({ to: '15550810009', kind });
      expect(verdict).to.deep.include({ reason: 'workspace_suspended', held: 'workspace_suspended' });
      if (!('holdUntil' in verdict)) throw new Error('sent');
      expect(verdict.holdUntil - 1_000_000).to.be.within(SUSPENDED_RECHECK_MS, SUSPENDED_RECHECK_MS + 2000);
    }
    suspended = false;
    // The daily cap of one is whole: the held messages took none of it.
    expect(await held.admit({ to: '15550810009', kind: 'send' })).to.have.property('go');
  });
});
