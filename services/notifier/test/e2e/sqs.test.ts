import { expect } from 'chai';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { WebhookReceiver, startSqsServer, useStack, waitFor, type SqsServerHandle } from '@mgw/testing';
import { createQueue, sqsClient, SqsReader } from '../brokers/sqs-reader.js';

describe('e2e: events of real sends published to Amazon SQS once the device opts in (real services, simulator, a real SQS-protocol server)', function () {
  this.timeout(180_000);
  let sqs: SqsServerHandle;
  let client: SQSClient;
  let reader: SqsReader;
  let receiver: WebhookReceiver;
  // Filled in before the stack starts (this `before` is registered first, so it runs first). The
  // credentials reach the notifier as AWS's own variables (the SDK's chain), as in production.
  const env: Record<string, string> = { ALLOWED_PRIVATE_HOSTS: '127.0.0.1' };
  before(async () => {
    sqs = await startSqsServer();
    client = sqsClient(sqs);
    const url = await createQueue(client, sqs, 'mgw-e2e.fifo');
    Object.assign(env, {
      EVENTS_SQS_QUEUE_URL: url,
      EVENTS_SQS_ENDPOINT: sqs.endpoint,
      AWS_ACCESS_KEY_ID: sqs.credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: sqs.credentials.secretAccessKey,
    });
    reader = new SqsReader(client, url);
    reader.start();
    receiver = await WebhookReceiver.start();
  });
  const stack = useStack({ notifier: true, sim: { receiptDelayMs: 20, readDelayMs: 50 }, env });
  after(async () => {
    await reader?.close();
    client?.destroy();
    await receiver?.close();
    await sqs?.stop();
  });

  const account = '15550720001';
  const contact = '15550720002';

  it('When the device sends before and after PUT /events/brokers {"sqs":{"enabled":true}}, then only the events after reach SQS, with the webhook’s ids and bodies, grouped by device, in order', async () => {
    const hook = await stack().api<{ data: { secret: string } }>('PUT', '/webhook', { url: receiver.url });
    receiver.secrets = [hook.body.data.secret];
    await stack().linkByQr(account, 'SQS Account');
    const send = async (text: string) => {
      const sent = await stack().api<{ messageId: string }>('POST', '/send', { to: contact, text });
      expect(sent.status).to.equal(202);
      const messageId = sent.body.messageId;
      await waitFor(() => receiver.events('message.read', (d) => d.messageId === messageId).length === 1, {
        timeoutMs: 30_000,
        what: 'message.read on the webhook',
      });
      return messageId;
    };
    const before = await send('before opting in');
    const put = await stack().api<{ data: Record<string, unknown> }>('PUT', '/events/brokers', {
      sqs: { enabled: true },
    });
    expect(put.status).to.equal(200);
    expect(put.body.data.sqs).to.deep.equal({ enabled: true });
    const after = await send('after opting in');

    const deviceId = stack().deviceId;
    const hooked = receiver
      .accepted()
      .filter((d) => d.body.data.messageId === after)
      .map((d) => ({ id: d.id, type: d.body.type, body: d.body }));
    expect(hooked.map((h) => h.type)).to.include.members([
      'message.sent',
      'message.delivered',
      'message.read',
    ]);
    await waitFor(() => hooked.every((h) => reader.received.some((m) => m.id === h.id)), {
      timeoutMs: 20_000,
      what: 'the webhook’s events on SQS',
    });
    const got = reader.received.filter((m) => m.body.data.messageId === after);
    expect(got.map((m) => m.id)).to.deep.equal(hooked.map((h) => h.id));
    got.forEach((m, i) => {
      expect(m.body).to.deep.equal(hooked[i]!.body);
      expect(m.groupId).to.equal(deviceId);
      expect(m.dedupId).to.equal(hooked[i]!.id);
      expect(m.key).to.equal(`${deviceId}.${hooked[i]!.type}`);
    });
    // Nothing from before the device opted in.
    expect(reader.received.filter((m) => m.body.data.messageId === before)).to.deep.equal([]);
  });
});
