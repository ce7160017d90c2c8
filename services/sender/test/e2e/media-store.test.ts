import { createHash, randomBytes } from 'node:crypto';
import { expect } from 'chai';
import {
  Stack,
  WebhookReceiver,
  startS3Server,
  waitFor,
  type S3ServerHandle,
  type InboxMessage,
  reportFailedTest,
} from '@mgw/testing';

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/**
 * The media store end to end (docs/media.md): the real services with MEDIA_STORE in a real
 * S3-protocol server (s3rver on a free port), the real Baileys client against the simulator, a
 * webhook receiver. An inbound image is kept in S3 and its pre-signed URL is in `message.received`;
 * an uploaded file is sent by id to a list; the S3 server gone makes a send wait (or fail with a
 * reason), never send a half-stored file.
 */
describe('e2e: media store in S3 (real services, simulator, s3rver)', function () {
  this.timeout(180_000);
  let s3: S3ServerHandle;
  let stack: Stack;
  let receiver: WebhookReceiver;
  const account = '15550900001';

  before(async () => {
    s3 = await startS3Server();
    stack = await Stack.start({
      notifier: true,
      sim: { receiptDelayMs: 0 },
      env: { ALLOWED_PRIVATE_HOSTS: '127.0.0.1', ...s3.env },
    });
    await stack.linkByQr(account);
    receiver = await WebhookReceiver.startFor(stack);
  });
  after(async () => {
    await receiver?.close();
    await stack?.stop();
    await s3?.stop();
  });
  afterEach(function () {
    reportFailedTest(this.currentTest, stack);
  });

  const upload = async (bytes: Buffer, type: string, filename: string) => {
    const res = await fetch(`${stack.apiUrl}/api/messenger/v1/media?filename=${filename}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.token}`, 'content-type': type },
      body: bytes,
    });
    const body = (await res.json()) as { data: { mediaId: string } };
    expect(res.status, JSON.stringify(body)).to.equal(201);
    return body.data.mediaId;
  };
  const inboxFile = async (phone: string, platformMessageId: string): Promise<InboxMessage> => {
    let found: InboxMessage | undefined;
    await waitFor(
      async () => Boolean((found = (await stack.inbox(phone)).find((m) => m.id === platformMessageId))),
      { what: `message ${platformMessageId} in ${phone}'s inbox` },
    );
    return found!;
  };
  const settled = async (messageId: string) => {
    let record: Record<string, string> = {};
    await waitFor(
      async () => {
        record = (await stack.api<{ data: Record<string, string> }>('GET', `/messages/${messageId}`)).body
          .data;
        return record.status !== 'queued';
      },
      { timeoutMs: 30_000, what: `message ${messageId} leaves queued` },
    );
    return record;
  };
  /** The senders' failed reads of the S3 store so far (mgw_media_store_operations_total). */
  const s3GetsFailed = async () => {
    let n = 0;
    for (const p of stack.senders()) {
      const text = await (await fetch(`http://127.0.0.1:${p.metricsPort}/metrics`)).text();
      const m = /^mgw_media_store_operations_total\{op="get",store="s3",outcome="failed"\} (\d+)$/m.exec(
        text,
      );
      n += m ? Number(m[1]) : 0;
    }
    return n;
  };

  it('When a contact sends an image to a device that keeps images, then message.received carries a pre-signed URL of it, and the URL fetches the image', async () => {
    const set = await stack.api('PUT', '/media/settings', { inboundTypes: ['image'] });
    expect(set.status, JSON.stringify(set.body)).to.equal(200);
    const contact = '15550900002';
    const image = randomBytes(150_000);
    const sentAt = Date.now();
    await stack.simApi('POST', `/contacts/${contact}/send`, {
      to: account,
      attachment: { type: 'image', base64: image.toString('base64'), mimeType: 'image/jpeg' },
    });
    const withImage = () =>
      receiver.events('message.received', (d) => d.contact !== undefined && Boolean(d.attachment));
    await waitFor(async () => withImage().length === 1, {
      timeoutMs: 20_000,
      what: 'message.received with the image',
    });
    const delivery = withImage()[0]!;
    const data = delivery.body.data as {
      messageId: string;
      receivedAt: string;
      attachment: { mediaId: string; url: string; urlExpiresAt: string; size: number };
    };
    const toEvent = Math.round(delivery.startedAt - sentAt);
    // From the contact's phone (simulator) through WhatsApp's media host, the gateway, S3 and the
    // notifier to the webhook receiver.
    console.log(
      `      image sent by the contact -> message.received with its URL at the webhook: ${toEvent} ms`,
    );
    expect(data.attachment.mediaId).to.match(/^med_/);
    expect(Date.parse(data.attachment.urlExpiresAt)).to.be.greaterThan(Date.now());
    // A quiet machine does it well within a second; the bound is 10 x that and more.
    expect(toEvent).to.be.below(10_000); // quiet: 600 ms
    const file = await fetch(data.attachment.url);
    expect(file.status).to.equal(200);
    expect(Buffer.from(await file.arrayBuffer()).equals(image)).to.equal(true);
    // The record names the object; each read signs a fresh URL, which fetches the same bytes.
    const record = await stack.api<{ data: { attachment: { mediaId: string; url: string } } }>(
      'GET',
      `/messages/${data.messageId}`,
    );
    expect(record.body.data.attachment.mediaId).to.equal(data.attachment.mediaId);
    const again = await fetch(record.body.data.attachment.url);
    expect(sha256(Buffer.from(await again.arrayBuffer()))).to.equal(sha256(image));
    const media = await stack.api<{ data: { source: string; messageId: string } }>(
      'GET',
      `/media/${data.attachment.mediaId}`,
    );
    expect(media.body.data).to.include({ source: 'inbound', messageId: data.messageId });
  });

  it('When a contact sends a document the device does not keep, then it is not stored (download on demand stays)', async () => {
    const before = receiver.events('message.received', (d) => Boolean(d.attachment)).length;
    await stack.sendInvoice('15550900003', account);
    await waitFor(
      async () => receiver.events('message.received', (d) => Boolean(d.attachment)).length === before + 1,
      { what: 'message.received with the invoice' },
    );
    const data = receiver.events('message.received', (d) => Boolean(d.attachment))[before]!.body.data as {
      attachment: Record<string, unknown>;
    };
    expect(data.attachment).to.not.have.any.keys('mediaId', 'url', 'mediaError');
  });

  it('When the S3 server goes away in the middle of storing an inbound image, then message.received says why (no mediaId) and the image still downloads on demand', async () => {
    const contact = '15550900004';
    const image = randomBytes(600_000);
    const killed = s3.killDuringNextUpload(128 * 1024);
    const before = receiver.events('message.received', (d) => d.contact !== undefined).length;
    try {
      await stack.simApi('POST', `/contacts/${contact}/send`, {
        to: account,
        attachment: { type: 'image', base64: image.toString('base64'), mimeType: 'image/jpeg' },
      });
      await killed;
      await waitFor(
        async () => receiver.events('message.received', (d) => d.contact !== undefined).length === before + 1,
        { timeoutMs: 30_000, what: 'message.received of the image' },
      );
    } finally {
      await s3.restart();
    }
    const data = receiver.events('message.received', (d) => d.contact !== undefined)[before]!.body.data as {
      messageId: string;
      attachment: Record<string, unknown>;
    };
    expect(data.attachment).to.include({ mediaError: 'media_store_unavailable' });
    expect(data.attachment).to.not.have.any.keys('mediaId', 'url');
    // Nothing names what the server may hold of it: the device stores no media object for it.
    const objects = await stack.redis.keys(`mgw:{${stack.deviceId}}:media:*`);
    for (const key of objects) expect(await stack.redis.hget(key, 'messageId')).to.not.equal(data.messageId);
    const res = await fetch(`${stack.apiUrl}/api/messenger/v1/messages/${data.messageId}/media`, {
      headers: { authorization: `Bearer ${stack.token}` },
    });
    expect(res.status).to.equal(200);
    expect(Buffer.from(await res.arrayBuffer()).equals(image)).to.equal(true);
  });

  it('When an uploaded file is sent by id to a list, then every recipient receives the same bytes', async () => {
    const file = randomBytes(400_000);
    const mediaId = await upload(file, 'application/pdf', 'menu.pdf');
    const to = ['15550900011', '15550900012', '15550900013'];
    const res = await stack.api<{ messageIds: string[] }>('POST', '/send', {
      to,
      attachment: { type: 'document', mediaId, caption: 'our menu' },
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(202);
    for (const [i, messageId] of res.body.messageIds.entries()) {
      const record = await settled(messageId);
      expect(record.status, JSON.stringify(record)).to.be.oneOf(['sent', 'delivered', 'read']);
      const got = await inboxFile(to[i]!, record.platformMessageId!);
      expect(got.type).to.equal('document');
      expect(got.fileSha256).to.equal(sha256(file));
      expect(got.fileName).to.equal('menu.pdf');
      expect(got.mimetype).to.equal('application/pdf');
      expect(got.caption).to.equal('our menu');
    }
  });

  it('When the S3 server is down as a send by id starts, then the message waits and goes once it is back; down for good, it fails media_store_unavailable', async () => {
    const file = randomBytes(50_000);
    const mediaId = await upload(file, 'image/png', 'late.png');
    const failedGets = await s3GetsFailed();
    await s3.kill();
    const res = await stack.api<{ messageId: string }>('POST', '/send', {
      to: '15550900021',
      attachment: { type: 'image', mediaId },
    });
    expect(res.status).to.equal(202);
    // Its send started and found the store down (the sender counts the failed read), and it waits:
    // the event itself, not a sleep.
    await waitFor(async () => (await s3GetsFailed()) > failedGets, {
      intervalMs: 50,
      what: 'the send to find the S3 server down',
    });
    expect(
      (await stack.api<{ data: { status: string } }>('GET', `/messages/${res.body.messageId}`)).body.data
        .status,
    ).to.equal('queued');
    await s3.restart();
    const record = await settled(res.body.messageId);
    expect(record.status, JSON.stringify(record)).to.be.oneOf(['sent', 'delivered', 'read']);
    expect((await inboxFile('15550900021', record.platformMessageId!)).fileSha256).to.equal(sha256(file));

    const other = await upload(randomBytes(50_000), 'image/png', 'never.png');
    await s3.kill();
    try {
      const lost = await stack.api<{ messageId: string }>('POST', '/send', {
        to: '15550900022',
        attachment: { type: 'image', mediaId: other },
      });
      const failed = await settled(lost.body.messageId);
      expect(failed).to.include({ status: 'failed', error: 'media_store_unavailable' });
      // Nothing of it reached the contact.
      expect((await stack.inbox('15550900022')).length).to.equal(0);
    } finally {
      await s3.restart();
    }
  });
});
