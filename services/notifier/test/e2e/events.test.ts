import { expect } from 'chai';
import { EVENT_TYPES } from '@mgw/contracts';
import { Webhook as WebhookVerifier } from 'standardwebhooks';
import { WebhookReceiver, sleep, useStack, waitFor, type ReceivedDelivery } from '@mgw/testing';

interface WebhookAnswer {
  success: boolean;
  data: { url: string; events: string[]; createdAt: string; secret?: string; disabledAt?: string };
}

describe('e2e: signed durable webhooks (real services with the notifier, simulator, a receiver verifying with standardwebhooks)', function () {
  this.timeout(180_000);
  // Receipts come at once: a delivery receipt can overtake the sender's own bookkeeping of "sent".
  const stack = useStack({
    notifier: true,
    sim: { receiptDelayMs: 0, readDelayMs: 50 },
    env: {
      ALLOWED_PRIVATE_HOSTS: '127.0.0.1',
      WEBHOOK_RETRY_BASE_MS: '300',
      WEBHOOK_RETRY_MAX_MS: '1000',
      WEBHOOK_SWEEP_MS: '500',
    },
  });
  const account = '15550700001';
  const contact = '15550700002';
  let receiver: WebhookReceiver;

  before(async () => {
    receiver = await WebhookReceiver.start();
  });
  after(async () => {
    await receiver?.close();
  });

  const sendText = async (to: string | string[], text = `hello ${Date.now()}`) => {
    const res = await stack().api<{ messageId: string; messageIds?: string[] }>('POST', '/send', {
      to,
      text,
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(202);
    return res.body;
  };
  const ofMessage = (type: string, messageId: string) =>
    receiver.events(type, (d) => d.messageId === messageId);

  it('When a webhook is set, then the answer carries a whsec_ secret once, GET shows it without, and a private URL is refused', async () => {
    const refused = await stack().api('PUT', '/webhook', { url: 'http://10.1.2.3/hooks' });
    expect(refused.status).to.equal(400);
    expect(refused.body).to.deep.include({ success: false, error: 'Invalid request data' });
    const badEvent = await stack().api('PUT', '/webhook', { url: receiver.url, events: ['message.nope'] });
    expect(badEvent.status).to.equal(400);
    expect((await stack().api('GET', '/webhook')).status).to.equal(404);

    const set = await stack().api<WebhookAnswer>('PUT', '/webhook', { url: receiver.url });
    expect(set.status).to.equal(200);
    expect(set.body.data.secret).to.match(/^whsec_/);
    expect(set.body.data.events).to.deep.equal([...EVENT_TYPES]);
    receiver.secrets = [set.body.data.secret!];
    const got = await stack().api<WebhookAnswer>('GET', '/webhook');
    expect(got.body.data).to.deep.equal({
      url: receiver.url,
      events: [...EVENT_TYPES],
      createdAt: set.body.data.createdAt,
    });
    // The secret is sealed at rest: its text is nowhere in Redis.
    const dump = JSON.stringify(await stack().redis.hgetall(`mgw:{${stack().deviceId}}:webhook`));
    expect(dump).not.to.include(set.body.data.secret!.slice(6));
  });

  it('When the device links, then session.status connecting and connected arrive, signed, with the phone and name', async () => {
    await stack().linkByQr(account, 'Events Account');
    await waitFor(
      async () => receiver.events('session.status', (d) => d.status === 'connected').length === 1,
      {
        timeoutMs: 15_000,
        what: 'session.status connected',
      },
    );
    const connected = receiver.events('session.status', (d) => d.status === 'connected')[0]!;
    expect(connected.body.data).to.include({
      deviceId: stack().deviceId,
      phone: account,
      name: 'Events Account',
    });
    expect(receiver.events('session.status', (d) => d.status === 'connecting')).to.have.length.of.at.least(1);
  });

  it('When a text is sent, then message.sent, message.delivered and message.read arrive in that order, each verified', async () => {
    const { messageId } = await sendText(contact);
    await waitFor(async () => ofMessage('message.read', messageId).length === 1, {
      timeoutMs: 20_000,
      what: 'message.read',
    }).catch(async (err: Error) => {
      const record = await stack().redis.hgetall(`mgw:{${stack().deviceId}}:msg:${messageId}`);
      const got = receiver.deliveries.map((d) => `${d.body.type}:${d.status}`).join(', ');
      throw new Error(`${err.message}; deliveries ${got}; record ${JSON.stringify(record)}`);
    });
    const mine = receiver.accepted().filter((d) => d.body.data.messageId === messageId);
    expect(mine.map((d) => d.body.type)).to.deep.equal(['message.sent', 'message.delivered', 'message.read']);
    for (const d of mine) {
      expect(d.verifiedWith, d.body.type).to.equal(receiver.secrets[0]);
      expect(d.body.data).to.include({ deviceId: stack().deviceId, messageId, to: contact });
      expect(d.body.data.platformMessageId).to.be.a('string');
      expect(Date.parse(d.body.timestamp)).to.be.greaterThan(0);
    }
    expect(mine[0]!.body.data).to.have.property('sentAt');
    expect(mine[2]!.body.data).to.include({ status: 'read' });
    expect(new Set(mine.map((d) => d.id)).size).to.equal(3);
    const record = await stack().api<{ success: boolean; data: Record<string, string> }>(
      'GET',
      `/messages/${messageId}`,
    );
    expect(record.body.data).to.include({ messageId, status: 'read' });
  });

  it('When a 30-recipient list is sent, then its batch counts reach 30 final and exactly one batch.completed arrives', async () => {
    const to = Array.from({ length: 30 }, (_, i) => `1555071${String(i).padStart(4, '0')}`);
    const { messageId: batchId, messageIds } = await sendText(to, 'a list');
    expect(messageIds).to.have.length(30);
    const first = await stack().api<{ data: { total: number; counts: Record<string, number> } }>(
      'GET',
      `/batches/${batchId}`,
    );
    expect(first.status).to.equal(200);
    expect(first.body.data.total).to.equal(30);
    // The statuses sum to total (`held` counts a part of `queued`, not a status of its own).
    const { held, ...byStatus } = first.body.data.counts;
    expect(held).to.equal(0);
    expect(Object.values(byStatus).reduce((a, b) => a + b, 0)).to.equal(30);
    await waitFor(async () => receiver.events('batch.completed', (d) => d.batchId === batchId).length === 1, {
      timeoutMs: 30_000,
      what: 'batch.completed',
    });
    const batch = await stack().api<{ data: { total: number; counts: Counts; completedAt: string } }>(
      'GET',
      `/batches/${batchId}`,
    );
    const { counts } = batch.body.data;
    expect(counts.queued).to.equal(0);
    expect(counts.sent + counts.delivered + counts.read + counts.failed).to.equal(30);
    expect(batch.body.data.completedAt).to.be.a('string');
    const completed = receiver.events('batch.completed', (d) => d.batchId === batchId)[0]!;
    expect(completed.body.data).to.include({ total: 30, batchId });
    // Its message events name the batch, and a list can be followed without a poll per message.
    await waitFor(async () => receiver.events('message.sent', (d) => d.batchId === batchId).length === 30, {
      timeoutMs: 10_000,
      what: '30 message.sent of the batch',
    });
    // batch.completed delivered too (waited for, not slept for), and once.
    await waitFor(() => receiver.events('batch.completed', (d) => d.batchId === batchId).length >= 1, {
      timeoutMs: 10_000,
      what: 'batch.completed delivered',
    });
    expect(receiver.events('batch.completed', (d) => d.batchId === batchId)).to.have.length(1);
    const foreign = await stack().api('GET', '/batches/not-a-batch');
    expect(foreign.status).to.equal(404);
  });

  it('When the receiver answers 500, then the same webhook-id comes again (with backoff) until it answers 2xx', async () => {
    let failuresLeft = 3;
    receiver.respond = (d) => (d.body.type === 'message.sent' && failuresLeft-- > 0 ? 500 : 200);
    try {
      const { messageId } = await sendText(contact);
      await waitFor(async () => ofMessage('message.sent', messageId).length === 1, {
        timeoutMs: 20_000,
        what: 'message.sent after retries',
      });
      const attempts = receiver.deliveries.filter(
        (d) => d.body.type === 'message.sent' && d.body.data.messageId === messageId,
      );
      expect(attempts.map((a) => a.status)).to.deep.equal([500, 500, 500, 200]);
      expect(new Set(attempts.map((a) => a.id)).size).to.equal(1);
      expect(new Set(attempts.map((a) => JSON.stringify(a.body))).size).to.equal(1);
      for (const a of attempts) expect(a.verifiedWith).to.equal(receiver.secrets[0]);
      // Backoff: each retry waits longer than WEBHOOK_RETRY_BASE_MS·0.8.
      for (let i = 1; i < attempts.length; i++)
        expect(attempts[i]!.at - attempts[i - 1]!.at).to.be.greaterThan(200);
    } finally {
      receiver.respond = () => 200;
    }
  });

  it('When the notifier is killed with SIGKILL mid-retry, then after a restart each event is accepted exactly once', async () => {
    receiver.respond = () => 503;
    const notifier = stack().processes.find((p) => p.name.startsWith('notifier'))!;
    const { messageId } = await sendText(contact);
    await waitFor(
      async () =>
        receiver.deliveries.filter((d) => d.body.data.messageId === messageId && d.status === 503).length >=
        2,
      { timeoutMs: 20_000, what: 'two failed attempts' },
    );
    notifier.child.kill('SIGKILL');
    await notifier.exited;
    receiver.respond = () => 200;
    await stack().startService('notifier');
    // An attempt cut off mid-flight comes back once its lock lapses (WEBHOOK_TIMEOUT_MS + 5 s).
    await waitFor(async () => ofMessage('message.read', messageId).length === 1, {
      timeoutMs: 45_000,
      what: 'message.read after the restart',
    });
    await sleep(1500);
    const byId = new Map<string, ReceivedDelivery[]>();
    for (const d of receiver.accepted()) byId.set(d.id, [...(byId.get(d.id) ?? []), d]);
    const duplicated = [...byId.entries()].filter(([, list]) => list.length > 1).map(([id]) => id);
    expect(duplicated).to.deep.equal([]);
    expect(ofMessage('message.sent', messageId)).to.have.length(1);
    expect(ofMessage('message.delivered', messageId)).to.have.length(1);
  });

  it('When the secret is rotated, then deliveries carry signatures of the new and the previous secret', async () => {
    const rotated = await stack().api<WebhookAnswer>('PUT', '/webhook', {
      url: receiver.url,
      rotateSecret: true,
    });
    expect(rotated.status).to.equal(200);
    const [previous] = receiver.secrets;
    const fresh = rotated.body.data.secret!;
    expect(fresh)
      .to.match(/^whsec_/)
      .and.not.equal(previous);
    const { messageId } = await sendText(contact);
    await waitFor(async () => ofMessage('message.sent', messageId).length === 1, {
      timeoutMs: 20_000,
      what: 'sent',
    });
    const delivery = ofMessage('message.sent', messageId)[0]!;
    expect(delivery.signature.split(' ')).to.have.length(2);
    receiver.secrets = [fresh];
    expect(verifies(delivery, fresh)).to.equal(true);
    expect(verifies(delivery, previous!)).to.equal(true);
    const again = await stack().api<WebhookAnswer>('PUT', '/webhook', { url: receiver.url });
    expect(again.body.data.secret).to.equal(undefined);
  });

  it('When a contact writes a text quoting one of ours, then message.received arrives and the message is readable by id', async () => {
    const { messageId: ours } = await sendText(contact, 'shall we meet?');
    await waitFor(async () => ofMessage('message.sent', ours).length === 1, {
      timeoutMs: 20_000,
      what: 'sent',
    });
    const record = await stack().api<{ data: { platformMessageId: string } }>('GET', `/messages/${ours}`);
    const text = `yes, at noon ${Date.now()}`;
    await stack().simApi('POST', `/contacts/${contact}/send`, {
      to: account,
      text,
      quotedId: record.body.data.platformMessageId,
    });
    await waitFor(async () => receiver.events('message.received', (d) => d.text === text).length === 1, {
      timeoutMs: 20_000,
      what: 'message.received',
    });
    const received = receiver.events('message.received', (d) => d.text === text)[0]!;
    expect(received.verifiedWith).to.be.a('string');
    expect(received.body.data).to.include({ deviceId: stack().deviceId, from: contact, text, replyTo: ours });
    const id = received.body.data.messageId as string;
    const read = await stack().api<{ success: boolean; data: Record<string, unknown> }>(
      'GET',
      `/messages/${id}`,
    );
    expect(read.status).to.equal(200);
    expect(read.body.data).to.include({
      messageId: id,
      direction: 'inbound',
      status: 'received',
      from: contact,
      text,
      replyTo: ours,
    });
    // Its text is sealed at rest: neither the record nor the delivery jobs hold it in the clear.
    const keysWithText: string[] = [];
    for (const key of await stack().redis.keys('mgw:*')) {
      const type = await stack().redis.type(key);
      const dump =
        type === 'hash'
          ? JSON.stringify(await stack().redis.hgetall(key))
          : type === 'string'
            ? await stack().redis.get(key)
            : '';
      if (dump?.includes('yes, at noon')) keysWithText.push(key);
    }
    expect(keysWithText).to.deep.equal([]);
  });

  it('When a contact sends a document, then message.received describes it and GET /messages/:id/media downloads it from WhatsApp on demand', async () => {
    const file = await stack().sendInvoice(contact, account);
    await waitFor(
      async () => receiver.events('message.received', (d) => Boolean(d.attachment)).length === 1,
      {
        timeoutMs: 20_000,
        what: 'message.received with an attachment',
      },
    );
    const event = receiver.events('message.received', (d) => Boolean(d.attachment))[0]!;
    expect(event.body.data.attachment).to.deep.equal({
      type: 'document',
      mimeType: 'application/pdf',
      fileName: 'invoice.pdf',
      size: file.length,
    });
    const id = event.body.data.messageId as string;
    const res = await fetch(`${stack().apiUrl}/api/messenger/v1/messages/${id}/media`, {
      headers: { authorization: `Bearer ${stack().token}` },
    });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('application/pdf');
    expect(res.headers.get('content-disposition')).to.include('invoice.pdf');
    expect(Buffer.from(await res.arrayBuffer()).equals(file)).to.equal(true);
    const textOnly = receiver.events('message.received', (d) => !d.attachment)[0]!.body.data
      .messageId as string;
    const none = await stack().api('GET', `/messages/${textOnly}/media`);
    expect(none.status).to.equal(404);
    expect(none.body).to.include({ error: 'This message has no media' });
  });

  it('When messages are listed, then pages come newest first with a cursor, filtered by batch, status and direction', async () => {
    type Page = { success: boolean; data: { messages: Record<string, string>[]; nextCursor?: string } };
    const list = async (query: string) => {
      const res = await stack().api<Page>('GET', `/messages?${query}`);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      return res.body.data;
    };
    const batch = receiver.events('batch.completed')[0]!.body.data.batchId as string;
    const ids: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await list(`batchId=${batch}&limit=7${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.messages.length).to.be.at.most(7);
      ids.push(...page.messages.map((m) => m.messageId!));
      for (const m of page.messages) expect(m).to.include({ batchId: batch, direction: 'outbound' });
      cursor = page.nextCursor;
    } while (cursor);
    expect(ids).to.have.length(30);
    expect(new Set(ids).size).to.equal(30);
    const newest = await list('limit=1');
    expect(newest.messages[0]!.direction).to.equal('inbound');
    const inbound = await list('direction=inbound');
    expect(inbound.messages.map((m) => m.status)).to.deep.equal(['received', 'received']);
    expect(inbound.messages[1]!.text).to.match(/^yes, at noon/);
    const read = await list('status=read&direction=outbound&limit=100');
    expect(read.messages.length).to.be.greaterThan(0);
    for (const m of read.messages) expect(m.status).to.equal('read');
    const bad = await stack().api('GET', '/messages?limit=0&cursor=abc');
    expect(bad.status).to.equal(400);
    expect(bad.body).to.include({ error: 'Invalid request data' });
  });

  it('When the phone drops the connection and later unlinks the device, then session.status reports connecting and disconnected with the reason', async () => {
    const before = receiver.deliveries.length;
    await stack().simApi('POST', '/faults/drop', { phone: account });
    await waitFor(
      async () =>
        receiver.deliveries
          .slice(before)
          .some((d) => d.body.type === 'session.status' && d.body.data.status === 'connected'),
      { timeoutMs: 30_000, what: 'reconnected' },
    );
    const afterDrop = receiver.deliveries.slice(before).filter((d) => d.body.type === 'session.status');
    expect(afterDrop.map((d) => d.body.data.status)).to.deep.equal(['connecting', 'connected']);
    expect(afterDrop[0]!.body.data.reason).to.be.a('string');

    const mark = receiver.deliveries.length;
    await stack().simApi('POST', '/phone/unlink', { phone: account });
    await waitFor(
      async () =>
        receiver.deliveries
          .slice(mark)
          .some((d) => d.body.type === 'session.status' && d.body.data.status === 'disconnected'),
      { timeoutMs: 30_000, what: 'disconnected' },
    );
    const gone = receiver.deliveries.slice(mark).find((d) => d.body.data.status === 'disconnected')!;
    expect(gone.body.data).to.include({ deviceId: stack().deviceId, reason: 'logged_out_from_phone' });
  });

  it('When the endpoint answers 410 Gone, then it is disabled and nothing more is sent to it', async () => {
    receiver.respond = () => 410;
    await stack().linkByQr(account, 'Events Account');
    await waitFor(
      async () => Boolean((await stack().api<WebhookAnswer>('GET', '/webhook')).body.data.disabledAt),
      {
        timeoutMs: 20_000,
        what: 'disabled',
      },
    );
    const count = receiver.deliveries.length;
    await sendText(contact);
    await sleep(1500);
    expect(receiver.deliveries.length).to.equal(count);
    const removed = await stack().api('DELETE', '/webhook');
    expect(removed.body).to.deep.equal({ success: true, message: 'Webhook removed' });
    expect((await stack().api('GET', '/webhook')).status).to.equal(404);
  });
});

type Counts = Record<'queued' | 'sent' | 'delivered' | 'read' | 'failed', number>;

function verifies(d: ReceivedDelivery, secret: string): boolean {
  // Each signature of the header on its own, with the library: one of them is this secret's.
  return d.signature.split(' ').some((sig) => {
    try {
      new WebhookVerifier(secret).verify(d.raw, {
        'webhook-id': d.id,
        'webhook-timestamp': d.timestamp,
        'webhook-signature': sig,
      });
      return true;
    } catch {
      return false;
    }
  });
}
