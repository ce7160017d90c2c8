import { expect } from 'chai';
import {
  WebhookReceiver,
  startNatsServer,
  startRabbitMqServer,
  useStack,
  waitFor,
  type BrokerServerHandle,
} from '@mgw/testing';
import { RabbitReader, readNatsStream, type Received } from '../brokers/readers.js';

describe('e2e: events of real sends published to RabbitMQ and NATS JetStream (real services, simulator, real brokers)', function () {
  this.timeout(180_000);
  let rabbit: BrokerServerHandle;
  let nats: BrokerServerHandle;
  let receiver: WebhookReceiver;
  let reader: RabbitReader;
  // Filled in before the stack starts (this `before` is registered first, so it runs first).
  const env: Record<string, string> = {
    ALLOWED_PRIVATE_HOSTS: '127.0.0.1',
    EVENTS_RABBITMQ_EXCHANGE: 'mgw.e2e',
    EVENTS_NATS_STREAM: 'MGW_E2E',
    EVENTS_NATS_SUBJECT_PREFIX: 'mgw.e2e',
  };
  before(async () => {
    [rabbit, nats] = await Promise.all([startRabbitMqServer(), startNatsServer()]);
    env.EVENTS_RABBITMQ_URL = rabbit.url;
    env.EVENTS_NATS_URL = nats.url;
    reader = new RabbitReader(rabbit.url, 'mgw.e2e', 'e2e-all');
    await reader.start();
    receiver = await WebhookReceiver.start();
  });
  const stack = useStack({ notifier: true, sim: { receiptDelayMs: 20, readDelayMs: 50 }, env });
  after(async () => {
    await reader?.close();
    await receiver?.close();
    await Promise.all([rabbit?.stop(), nats?.stop()]);
  });

  const account = '15550710001';
  const contact = '15550710002';

  it('When the device links, sends and a contact replies, then RabbitMQ and NATS get the same events as the webhook (same ids, bodies, message text opened), in order, keyed by device and type', async () => {
    const hook = await stack().api<{ data: { secret: string } }>('PUT', '/webhook', { url: receiver.url });
    receiver.secrets = [hook.body.data.secret];
    await stack().linkByQr(account, 'Broker Account');
    const sent = await stack().api<{ messageId: string }>('POST', '/send', {
      to: contact,
      text: 'broker hello',
    });
    expect(sent.status).to.equal(202);
    const messageId = sent.body.messageId;
    const text = `broker reply ${Date.now()}`;
    await waitFor(() => receiver.events('message.read', (d) => d.messageId === messageId).length === 1, {
      timeoutMs: 30_000,
      what: 'message.read on the webhook',
    });
    await stack().simApi('POST', `/contacts/${contact}/send`, { to: account, text });
    await waitFor(() => receiver.events('message.received', (d) => d.text === text).length === 1, {
      timeoutMs: 30_000,
      what: 'message.received on the webhook',
    });

    const deviceId = stack().deviceId;
    const hooked = receiver.accepted().map((d) => ({ id: d.id, type: d.body.type, body: d.body }));
    let natsGot: Received[] = [];
    await waitFor(
      async () => {
        natsGot = await readNatsStream(nats.url, 'MGW_E2E');
        return reader.received.length >= hooked.length && natsGot.length >= hooked.length;
      },
      { timeoutMs: 20_000, what: 'every webhook event on both brokers' },
    );
    for (const [got, key] of [
      [reader.received, (t: string) => `${deviceId}.${t}`],
      [natsGot, (t: string) => `mgw.e2e.${deviceId}.${t}`],
    ] as const) {
      // The same events in the same order (the webhook delivers one at a time, in log order; a
      // broker may already be further on).
      expect(got.slice(0, hooked.length).map((m) => m.id)).to.deep.equal(hooked.map((h) => h.id));
      got.slice(0, hooked.length).forEach((m, i) => {
        expect(m.key).to.equal(key(hooked[i]!.type));
        expect(m.body).to.deep.equal(hooked[i]!.body);
      });
      expect(got.map((m) => m.body.type)).to.include.members([
        'session.status',
        'message.sent',
        'message.delivered',
        'message.read',
        'message.received',
      ]);
      // The contact's text, sealed at rest, is opened for the broker as for the webhook.
      expect(got.find((m) => m.body.type === 'message.received')!.body.data).to.include({
        from: contact,
        text,
      });
    }
  });

  it('When the device turns RabbitMQ off with PUT /events/brokers, then its next events reach NATS only', async () => {
    const put = await stack().api('PUT', '/events/brokers', { rabbitmq: { enabled: false } });
    expect(put.status).to.equal(200);
    const rabbitBefore = reader.received.length;
    const natsBefore = (await readNatsStream(nats.url, 'MGW_E2E')).length;
    const sent = await stack().api<{ messageId: string }>('POST', '/send', {
      to: contact,
      text: 'nats only',
    });
    const messageId = sent.body.messageId;
    await waitFor(
      async () =>
        (await readNatsStream(nats.url, 'MGW_E2E')).some(
          (m) => m.body.type === 'message.read' && m.body.data.messageId === messageId,
        ),
      { timeoutMs: 30_000, what: 'message.read on NATS' },
    );
    expect((await readNatsStream(nats.url, 'MGW_E2E')).length).to.be.greaterThan(natsBefore);
    // The webhook got it too, and RabbitMQ nothing.
    await waitFor(() => receiver.events('message.read', (d) => d.messageId === messageId).length === 1, {
      what: 'the webhook',
    });
    expect(reader.received.length).to.equal(rabbitBefore);
  });
});
