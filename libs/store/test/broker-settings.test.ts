import { expect } from 'chai';
import { Redis } from 'ioredis';
import { BROKER_SETTING_HISTORY, brokerWantsAt, keys } from '@mgw/contracts';
import { BrokerSettingsStore, publishEvent } from '../src/index.js';

/**
 * The devices' broker settings (PUT /events/brokers) with the log id each change took effect at,
 * so the relay judges an event by the setting in force when it was logged (real Redis).
 */
describe('store: broker settings, each change bound to the event log id it took effect at (real Redis)', () => {
  let redis: Redis;
  let store: BrokerSettingsStore;
  before(() => {
    redis = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: null });
    store = new BrokerSettingsStore(redis);
  });
  after(async () => {
    await redis.quit();
  });

  const newDevice = () => `bset-${Math.random().toString(36).slice(2, 8)}`;
  /** Logs an event and answers its log id. */
  const log = async (deviceId: string, seq: number): Promise<string> => {
    await publishEvent(redis, deviceId, 'message.sent', { seq });
    const [last] = await redis.xrevrange(keys.eventLog(deviceId), '+', '-', 'COUNT', 1);
    return last![0];
  };

  it('When a value stored by the previous release (plain {enabled, events}) is read, then GET answers it and it governs every event; the first change keeps it for the events logged before and upgrades the value in place', async () => {
    const d = newDevice();
    const early = await log(d, 1);
    await redis.hset(keys.brokerSettings(d), 'rabbitmq', JSON.stringify({ enabled: false }));
    await redis.hset(
      keys.brokerSettings(d),
      'nats',
      JSON.stringify({ enabled: true, events: ['message.read'] }),
    );
    expect(await store.get(d)).to.deep.equal({
      rabbitmq: { enabled: false },
      nats: { enabled: true, events: ['message.read'] },
      sqs: { enabled: false },
    });
    const old = await store.history(d, 'rabbitmq');
    expect(brokerWantsAt(old, early, 'message.sent')).to.equal(false);
    expect(brokerWantsAt(old, '99999999999999-0', 'message.sent')).to.equal(false);

    const before = await log(d, 2);
    const answer = await store.set(d, { rabbitmq: { enabled: true } });
    const after = await log(d, 3);
    // The answer's shape is the API's: no boundary, no history.
    expect(answer).to.deep.equal({
      rabbitmq: { enabled: true },
      nats: { enabled: true, events: ['message.read'] },
      sqs: { enabled: false },
    });
    const h = await store.history(d, 'rabbitmq');
    expect(h.after).to.equal(before);
    expect(h.past).to.deep.equal([{ setting: { enabled: false } }]);
    expect(brokerWantsAt(h, early, 'message.sent')).to.equal(false);
    expect(brokerWantsAt(h, before, 'message.sent')).to.equal(false);
    expect(brokerWantsAt(h, after, 'message.sent')).to.equal(true);
    // Stored: the setting, its boundary and the one before (the field the old release reads
    // `enabled` and `events` from, as before).
    const stored = JSON.parse((await redis.hget(keys.brokerSettings(d), 'rabbitmq'))!) as Record<
      string,
      unknown
    >;
    expect(stored).to.deep.include({ enabled: true, after: before });
    expect(stored.history).to.deep.equal([{ enabled: false }]);
    // The transport not named keeps its stored value untouched.
    expect(await redis.hget(keys.brokerSettings(d), 'nats')).to.equal(
      JSON.stringify({ enabled: true, events: ['message.read'] }),
    );
  });

  it('When a device that never set anything opts in to SQS, then its earlier events stay not wanted (the opt-in default) and its later ones are wanted; with no log yet, every event is (stored as given)', async () => {
    const d = newDevice();
    const early = await log(d, 1);
    await store.set(d, { sqs: { enabled: true, events: ['message.sent'] } });
    const later = await log(d, 2);
    const h = await store.history(d, 'sqs');
    expect(h.after).to.equal(early);
    expect(brokerWantsAt(h, early, 'message.sent')).to.equal(false);
    expect(brokerWantsAt(h, later, 'message.sent')).to.equal(true);
    expect(brokerWantsAt(h, later, 'message.read')).to.equal(false);

    // No log yet: the setting as given, governing every event (all are logged after it).
    const fresh = newDevice();
    await store.set(fresh, { sqs: { enabled: true } });
    const first = await log(fresh, 1);
    expect(await redis.hget(keys.brokerSettings(fresh), 'sqs')).to.equal(JSON.stringify({ enabled: true }));
    expect(brokerWantsAt(await store.history(fresh, 'sqs'), first, 'message.sent')).to.equal(true);
  });

  it('When the log was trimmed to nothing, then the boundary is still its last id (not 0-0): the trimmed ids stay before it', async () => {
    const d = newDevice();
    await log(d, 1);
    const last = await log(d, 2);
    await redis.xtrim(keys.eventLog(d), 'MAXLEN', 0);
    await store.set(d, { nats: { enabled: false } });
    expect((await store.history(d, 'nats')).after).to.equal(last);
  });

  it('When the same setting is put again, then nothing changes (no era is added, the boundary stays)', async () => {
    const d = newDevice();
    await log(d, 1);
    await store.set(d, { rabbitmq: { enabled: true, events: ['message.read', 'message.sent'] } });
    const raw = await redis.hget(keys.brokerSettings(d), 'rabbitmq');
    await log(d, 2);
    await store.set(d, { rabbitmq: { enabled: true, events: ['message.read', 'message.sent'] } });
    expect(await redis.hget(keys.brokerSettings(d), 'rabbitmq')).to.equal(raw);
    // The default said explicitly: stored as said, governing every event (it did already).
    const other = newDevice();
    await log(other, 1);
    await store.set(other, { nats: { enabled: true } });
    expect(await redis.hget(keys.brokerSettings(other), 'nats')).to.equal(JSON.stringify({ enabled: true }));
    expect(await store.history(other, 'nats')).to.deep.equal({ current: { enabled: true }, past: [] });
  });

  it(`When a setting changes more than ${BROKER_SETTING_HISTORY} times, then the ${BROKER_SETTING_HISTORY} latest earlier settings are kept and an event older than the oldest kept boundary is not wanted`, async () => {
    const d = newDevice();
    const ids: string[] = [];
    for (let i = 0; i < BROKER_SETTING_HISTORY + 4; i++) {
      ids.push(await log(d, i));
      await store.set(d, { nats: { enabled: i % 2 === 1 } });
    }
    const last = await log(d, 99);
    const h = await store.history(d, 'nats');
    expect(h.past).to.have.length(BROKER_SETTING_HISTORY);
    // Change i took effect after ids[i]; it turned NATS on when i is odd.
    // Event i was logged under change i - 1 (the default, on, for event 0): wanted when i is even.
    // Kept: changes 3..18 (16) before the current one, 19; so events 4 and later are judged as logged.
    for (let i = 4; i < ids.length; i++)
      expect(brokerWantsAt(h, ids[i]!, 'message.sent'), `event ${i}`).to.equal(i % 2 === 0);
    expect(brokerWantsAt(h, last, 'message.sent')).to.equal(true);
    // Event 2 was wanted (change 1 turned NATS on) but its era is gone: not wanted (conservative).
    expect(brokerWantsAt(h, ids[2]!, 'message.sent')).to.equal(false);
    expect(brokerWantsAt(h, ids[0]!, 'message.sent')).to.equal(false);
  });
});
