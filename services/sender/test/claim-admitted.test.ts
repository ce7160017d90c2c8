/**
 * The claim that takes the message's unit of the caps in the same step (MessageStore.claimAdmitted,
 * `message-claim-admit-8.lua`), on real Redis: a claimed message has its unit, a message the caps
 * hold is not claimed, and a message the claim refuses takes nothing — with the same refusals as
 * the plain claim (`message-claim-6.lua`, which shares its checks).
 */
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { keys, newMessageId, newPlatformMessageId, type SendJobData } from '@mgw/contracts';
import { MessageStore, type CapTake } from '@mgw/store';

const WINDOW_MS = 86_400_000;

describe('sender: the claim takes the caps in the same step (real Redis)', function () {
  let redis: Redis;
  let store: MessageStore;
  let deviceId: string;

  before(() => {
    redis = new Redis(process.env.REDIS_URL!);
    store = new MessageStore(redis, 600);
  });
  after(() => redis.disconnect());
  beforeEach(() => {
    deviceId = `claim-caps-${Math.random().toString(36).slice(2, 8)}`;
  });
  afterEach(async () => {
    const left = await redis.keys(`*{${deviceId}}*`);
    if (left.length) await redis.del(...left);
  });

  const job = (to = '15550830001', more: Partial<SendJobData> = {}): SendJobData => ({
    kind: 'send',
    messageId: newMessageId(),
    platformMessageId: newPlatformMessageId(),
    deviceId,
    to,
    contentId: newMessageId(),
    linkGeneration: 0,
    enqueuedAt: Date.now(),
    ...more,
  });
  const take = (to: string, cap = Infinity, firstContactCap = Infinity): CapTake => ({
    phone: to,
    windowStart: 0,
    windowMs: WINDOW_MS,
    cap,
    firstContactCap,
    group: false,
  });
  const usage = async () => redis.hgetall(keys.deviceUsage(deviceId, 0));
  const record = async (data: SendJobData) => redis.hgetall(keys.message(deviceId, data.messageId));

  it('When the caps allow it, then the message is claimed and its unit taken: a stranger as a first contact, a chat not', async () => {
    const stranger = job('15550830001');
    expect(await store.claimAdmitted(stranger, take(stranger.to, 5, 5))).to.deep.equal({
      outcome: 'claimed',
      first: true,
    });
    expect(await usage()).to.deep.equal({ sent: '1', firstContacts: '1' });
    expect((await record(stranger)).sendingAt, 'claimed').to.be.a('string');
    expect(await redis.get(keys.devicePace(deviceId)), "the device's last claim").to.be.a('string');

    await redis.sadd(keys.deviceChats(deviceId), '15550830002');
    const chat = job('15550830002');
    expect(await store.claimAdmitted(chat, take(chat.to, 5, 5))).to.deep.equal({
      outcome: 'claimed',
      first: false,
    });
    expect(await usage()).to.deep.equal({ sent: '2', firstContacts: '1' });
  });

  it('When a cap is used up, then the message is not claimed and nothing is written', async () => {
    const first = job('15550830003');
    await store.claimAdmitted(first, take(first.to, 1));
    const over = job('15550830004');
    expect(await store.claimAdmitted(over, take(over.to, 1))).to.deep.equal({
      outcome: 'daily_cap',
      first: false,
    });
    const strangerOver = job('15550830005');
    expect(await store.claimAdmitted(strangerOver, take(strangerOver.to, 5, 1))).to.deep.equal({
      outcome: 'first_contact_cap',
      first: false,
    });
    expect(await record(over), 'no record, no claim').to.deep.equal({});
    expect(await record(strangerOver)).to.deep.equal({});
    expect(await usage()).to.deep.equal({ sent: '1', firstContacts: '1' });
    // A later claim of the held message, once the caps allow it, is its first.
    expect((await store.claimAdmitted(over, take(over.to, 2))).outcome).to.equal('claimed');
    expect((await record(over)).sendBegan, 'no earlier attempt').to.equal(undefined);
  });

  it('When the claim refuses the message, then it answers as the plain claim does and takes no unit, even with the caps used up', async () => {
    const cases: [string, (d: SendJobData) => Promise<unknown>, Partial<SendJobData>][] = [
      ['moved', (d) => redis.hset(keys.message(deviceId, d.messageId), 'movedTo', 'other'), {}],
      ['failed', (d) => redis.hset(keys.message(deviceId, d.messageId), 'status', 'failed'), {}],
      ['sent', (d) => redis.hset(keys.message(deviceId, d.messageId), 'status', 'sent', 'sentAt', 'x'), {}],
      ['deleted', (d) => redis.hset(keys.message(deviceId, d.messageId), 'status', 'deleted'), {}],
      [
        'cancelled',
        (d) => redis.hset(keys.batch(deviceId, d.batchId!), 'cancelledAt', 'x'),
        { batchId: 'b1' },
      ],
      ['paused', (d) => redis.hset(keys.batch(deviceId, d.batchId!), 'pausedAt', 'x'), { batchId: 'b2' }],
      ['expired', async () => undefined, { kind: 'otp', expiresAt: Date.now() - 1 }],
      [
        'restricted',
        () =>
          redis.hset(keys.deviceRestriction(deviceId), 'reason', 'r', 'until', String(Date.now() + 60_000)),
        {},
      ],
    ];
    for (const [why, arrange, more] of cases) {
      await redis.del(keys.deviceRestriction(deviceId));
      const plain = job('15550830006', more);
      const admitted = job('15550830006', more);
      await arrange(plain);
      await arrange(admitted);
      expect(await store.claim(plain), why).to.equal(why);
      // Caps used up too: the refusal comes first, as the plain claim gives it.
      expect(await store.claimAdmitted(admitted, take(admitted.to, 0)), why).to.deep.equal({
        outcome: why,
        first: false,
      });
      expect((await record(admitted)).sendingAt, `${why}: not claimed`).to.equal(undefined);
    }
    expect(await usage(), 'no unit taken').to.deep.equal({});
  });

  it('When the message was claimed before (an attempt that died before its end was recorded), then the claim counts its send as begun', async () => {
    const data = job('15550830007');
    await store.claimAdmitted(data, take(data.to));
    expect((await store.claimAdmitted(data, take(data.to))).outcome).to.equal('claimed');
    expect((await record(data)).sendBegan).to.equal('1');
  });
});
