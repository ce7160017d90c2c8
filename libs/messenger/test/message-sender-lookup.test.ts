import { expect } from 'chai';
import { Redis } from 'ioredis';
import { keys } from '@mgw/contracts';
import { LookupFailedError } from '../src/index.js';
import { fakeSocketSender } from './fake-socket-sender.js';

type UsyncEntry = { id: string; contact?: boolean; lid?: string };
type UsyncAnswer = undefined | { list: UsyncEntry[] };

/**
 * How a number lookup's answer is read. Baileys' `executeUSyncQuery` answers `undefined` when its
 * usync query timed out (seen while an account was being logged out under load) and a list whose
 * entry for the number says "out" (or has none) when the number is not on WhatsApp; only the
 * second may fail a message for good.
 */
describe('messenger: number lookup answers (fake socket, real Redis)', () => {
  let redis: Redis;
  before(() => {
    redis = new Redis(process.env.REDIS_URL!);
  });
  after(async () => {
    await redis.quit();
  });

  const senderAnswering = (answers: UsyncAnswer[], asked: string[][] = []) =>
    fakeSocketSender(redis, 'lookup', {
      executeUSyncQuery: async (query: { users: { phone?: string }[] }) => {
        asked.push(query.users.map((u) => u.phone ?? ''));
        return answers.shift();
      },
    });

  it('When the lookup query times out, then it fails retryably and nothing is cached; the next answer counts', async () => {
    const jid = '15550001111@s.whatsapp.net';
    const { deviceId, conn, sender } = await senderAnswering([
      undefined,
      { list: [{ id: jid, contact: true }] },
    ]);
    let thrown: unknown;
    await sender.lookup('15550001111').catch((err: unknown) => (thrown = err));
    expect(thrown).to.be.instanceOf(LookupFailedError);
    expect(await redis.get(keys.contact(deviceId, '15550001111'))).to.equal(null);
    expect(await sender.lookup('15550001111')).to.equal(jid);
    await conn.stop();
  });

  it('When the number is not on WhatsApp (an answer without it), then null, remembered for the device', async () => {
    const { deviceId, conn, sender } = await senderAnswering([{ list: [] }]);
    expect(await sender.lookup('15550002222')).to.equal(null);
    expect(await redis.get(keys.contact(deviceId, '15550002222'))).to.equal('');
    expect(await redis.ttl(keys.contact(deviceId, '15550002222'))).to.be.within(3590, 3600);
    // Asked once: the second lookup is answered from Redis (the fake has no answer left).
    expect(await sender.lookup('15550002222')).to.equal(null);
    await conn.stop();
  });

  it('When the caller has just read the cache (readCache false), then WhatsApp is asked without a second read, and its answer cached', async () => {
    const asked: string[][] = [];
    const jid = '15550006666@s.whatsapp.net';
    const { deviceId, conn, sender } = await senderAnswering([{ list: [{ id: jid, contact: true }] }], asked);
    // A value the cache would answer with, were it read: it is not.
    await redis.set(keys.contact(deviceId, '15550006666'), '');
    expect(await sender.lookup('15550006666', false)).to.equal(jid);
    expect(asked).to.deep.equal([['+15550006666']]);
    expect(await redis.get(keys.contact(deviceId, '15550006666'))).to.equal(jid);
    // The default reads the cache first: answered from it, nothing more asked.
    expect(await sender.lookup('15550006666')).to.equal(jid);
    expect(asked).to.have.length(1);
    await conn.stop();
  });

  it('When several numbers are looked up at once, then each gets its own answer (with its LID) in one query, and a number answered under another JID is asked alone', async () => {
    const asked: string[][] = [];
    const { deviceId, conn, sender } = await senderAnswering(
      [
        {
          list: [
            { id: '15550003333@s.whatsapp.net', contact: true, lid: '901@lid' },
            { id: '15550004444@s.whatsapp.net', contact: false },
            // The third number comes back rewritten: it cannot be matched in a batch.
            { id: '155500055550@s.whatsapp.net', contact: true },
          ],
        },
        { list: [{ id: '155500055550@s.whatsapp.net', contact: true }] },
      ],
      asked,
    );
    const answers = await sender.lookupMany(['15550003333', '15550004444', '15550005555', '15550003333']);
    expect(asked).to.deep.equal([['+15550003333', '+15550004444', '+15550005555'], ['+15550005555']]);
    expect(Object.fromEntries(answers)).to.deep.equal({
      '15550003333': { onWhatsApp: true, jid: '15550003333@s.whatsapp.net', lid: '901@lid' },
      '15550004444': { onWhatsApp: false },
      '15550005555': { onWhatsApp: true, jid: '155500055550@s.whatsapp.net' },
    });
    // Cached for the sends: no query left, yet each is answered.
    expect(await sender.lookup('15550003333')).to.equal('15550003333@s.whatsapp.net');
    expect(await sender.lookup('15550004444')).to.equal(null);
    expect(await sender.lookup('15550005555')).to.equal('155500055550@s.whatsapp.net');
    expect(await redis.get(keys.contact(deviceId, '15550003333'))).to.equal(
      '15550003333@s.whatsapp.net 901@lid',
    );
    await conn.stop();
  });
});
