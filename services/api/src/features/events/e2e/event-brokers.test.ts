import { expect } from 'chai';
import { ERRORS, keys } from '@mgw/contracts';
import { publishEvent } from '@mgw/store';
import { call, createToken, freshDeviceId, startApi, type TestApi } from '../../../../test/helpers/api.js';

describe('Events: GET/PUT /events/brokers sets what the device publishes to RabbitMQ, NATS and SQS', () => {
  let t: TestApi;
  let deviceId: string;
  let token: string;
  before(async () => (t = await startApi()));
  beforeEach(async () => {
    deviceId = freshDeviceId();
    token = await createToken(t, { deviceId });
  });
  after(async () => t.close());

  const get = (as = token) => call(`${t.api}/events/brokers`, { token: as });
  const put = (json: unknown, as = token) =>
    call(`${t.api}/events/brokers`, { method: 'PUT', token: as, json });

  it('When a device never set anything, then RabbitMQ and NATS are on for every event and SQS is off (opt-in)', async () => {
    const res = await get();
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({
      success: true,
      data: { rabbitmq: { enabled: true }, nats: { enabled: true }, sqs: { enabled: false } },
    });
  });

  it('When a device opts in to SQS with event types, then it is stored for it alone and the other transports keep theirs', async () => {
    const res = await put({ sqs: { enabled: true, events: ['message.received'] } });
    expect(res.status).to.equal(200);
    expect(res.body.data).to.deep.equal({
      rabbitmq: { enabled: true },
      nats: { enabled: true },
      sqs: { enabled: true, events: ['message.received'] },
    });
    expect(await t.redis.hgetall(keys.brokerSettings(deviceId))).to.deep.equal({
      sqs: JSON.stringify({ enabled: true, events: ['message.received'] }),
    });
    const other = await createToken(t, { deviceId: freshDeviceId() });
    expect(((await get(other)).body.data as { sqs: unknown }).sqs).to.deep.equal({ enabled: false });
  });

  it('When a device turns one transport off and picks types for the other, then both are stored for it alone and the other transport keeps its setting', async () => {
    const first = await put({ rabbitmq: { enabled: false } });
    expect(first.status).to.equal(200);
    expect(first.body.data).to.deep.equal({
      rabbitmq: { enabled: false },
      nats: { enabled: true },
      sqs: { enabled: false },
    });
    const second = await put({ nats: { enabled: true, events: ['message.delivered', 'message.read'] } });
    expect(second.body.data).to.deep.equal({
      rabbitmq: { enabled: false },
      nats: { enabled: true, events: ['message.delivered', 'message.read'] },
      sqs: { enabled: false },
    });
    expect((await get()).body.data).to.deep.equal(second.body.data);
    // What the notifier reads: one field per transport in the device's hash.
    expect(await t.redis.hgetall(keys.brokerSettings(deviceId))).to.deep.equal({
      rabbitmq: JSON.stringify({ enabled: false }),
      nats: JSON.stringify({ enabled: true, events: ['message.delivered', 'message.read'] }),
    });
    // Another device is untouched.
    const other = await createToken(t, { deviceId: freshDeviceId() });
    expect((await get(other)).body.data).to.deep.equal({
      rabbitmq: { enabled: true },
      nats: { enabled: true },
      sqs: { enabled: false },
    });
  });

  it('When a device with events in its log changes a transport twice, then the answers hold only enabled and events (each change’s log id and the settings before it are kept for the notifier alone)', async () => {
    await publishEvent(t.redis, deviceId, 'message.sent', { seq: 1 });
    await put({ sqs: { enabled: true } });
    await publishEvent(t.redis, deviceId, 'message.sent', { seq: 2 });
    const res = await put({ sqs: { enabled: true, events: ['message.read'] } });
    expect(res.status).to.equal(200);
    const answer = {
      rabbitmq: { enabled: true },
      nats: { enabled: true },
      sqs: { enabled: true, events: ['message.read'] },
    };
    expect(res.body.data).to.deep.equal(answer);
    expect((await get()).body.data).to.deep.equal(answer);
    // Stored for the notifier: the setting, the log id it took effect after, the ones before it.
    const stored = JSON.parse((await t.redis.hget(keys.brokerSettings(deviceId), 'sqs'))!) as {
      after: string;
      history: { enabled: boolean; after?: string }[];
    };
    expect(stored.after).to.match(/^\d+-\d+$/);
    expect(stored.history.map((h) => h.enabled)).to.deep.equal([true, false]);
    expect(stored.history[0]!.after).to.match(/^\d+-\d+$/);
    expect(stored.history[1]).to.not.have.property('after');
  });

  it('When the body names a broker address, an unknown transport or event type, or nothing, then 400 and nothing changes (the address is the operator’s, never a device’s)', async () => {
    for (const body of [
      { rabbitmq: { enabled: true, url: 'amqp://attacker.example.com' } },
      { nats: { enabled: true, servers: ['nats://10.0.0.1:4222'] } },
      { sqs: { enabled: true, queueUrl: 'https://sqs.us-east-1.amazonaws.com/1/attacker.fifo' } },
      { sqs: { enabled: true, credentials: { accessKeyId: 'x', secretAccessKey: 'y' } } },
      { kafka: { enabled: true } },
      { rabbitmq: { enabled: true, events: ['message.nope'] } },
      { rabbitmq: { enabled: true, events: [] } },
      { rabbitmq: {} },
      {},
    ]) {
      const res = await put(body);
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(res.body.success).to.equal(false);
      expect(res.body.error).to.equal(ERRORS.invalidRequest);
    }
    expect(await t.redis.exists(keys.brokerSettings(deviceId))).to.equal(0);
  });
});
