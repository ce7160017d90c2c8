import { expect } from 'chai';
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Stack, waitFor, type InboxMessage, reportFailedTest } from '@mgw/testing';

const TYPES = [
  { type: 'image', mimeType: 'image/jpeg', caption: true },
  { type: 'video', mimeType: 'video/mp4', caption: true },
  { type: 'audio', mimeType: 'audio/mpeg', caption: false },
  { type: 'document', mimeType: 'application/pdf', caption: true },
  { type: 'sticker', mimeType: 'image/webp', caption: false },
] as const;

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe('e2e: media by base64 and URL, text with attachment, replies (real services, simulator)', function () {
  this.timeout(180_000);
  let stack: Stack;
  let server: http.Server;
  let baseUrl = '';
  const files = new Map<string, Buffer>();
  // The outbound guard refuses loopback: the files are served from 127.0.0.2, which the stack
  // allows (ALLOWED_PRIVATE_HOSTS), while a "secret" service on 127.0.0.1 must never be reached.
  let secret: http.Server;
  let secretPort = 0;
  let secretHits = 0;
  const account = '15550300001';

  before(async () => {
    secret = http.createServer((_req, res) => {
      secretHits += 1;
      res.writeHead(200).end('internal metrics');
    });
    await new Promise<void>((r) => secret.listen(0, '127.0.0.1', r));
    secretPort = (secret.address() as AddressInfo).port;
    server = http.createServer((req, res) => {
      if (req.url === '/to-secret') {
        res.writeHead(302, { location: `http://127.0.0.1:${secretPort}/metrics` }).end();
        return;
      }
      const body = files.get(req.url ?? '');
      if (!body) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(body);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.2', r));
    baseUrl = `http://127.0.0.2:${(server.address() as AddressInfo).port}`;
    stack = await Stack.start({ env: { ALLOWED_PRIVATE_HOSTS: '127.0.0.2' } });
    await stack.linkByQr(account);
  });
  after(async () => {
    await stack?.stop();
    await new Promise<void>((r) => server.close(() => r()));
    await new Promise<void>((r) => secret.close(() => r()));
  });
  afterEach(function () {
    reportFailedTest(this.currentTest, stack);
  });

  async function sendAndWait(body: Record<string, unknown>): Promise<Record<string, string>> {
    const res = await stack.api<{ success: boolean; messageId: string }>('POST', '/send', body);
    expect(res.body.success, JSON.stringify(res.body)).to.equal(true);
    let record: Record<string, string> = {};
    await waitFor(
      async () => {
        record = (await stack.api<{ data: Record<string, string> }>('GET', `/messages/${res.body.messageId}`))
          .body.data;
        return record.status !== 'queued';
      },
      { timeoutMs: 30_000, what: 'message leaves queued' },
    );
    return record;
  }

  async function arrived(phone: string, platformMessageId: string): Promise<InboxMessage> {
    let found: InboxMessage | undefined;
    await waitFor(
      async () => Boolean((found = (await stack.inbox(phone)).find((m) => m.id === platformMessageId))),
      {
        what: `message ${platformMessageId} in ${phone}'s inbox`,
      },
    );
    return found!;
  }

  for (const spec of TYPES) {
    for (const via of ['base64', 'url'] as const) {
      it(`When a ${spec.type} is sent by ${via} with caption and file name, then the contact receives byte-identical data`, async () => {
        const contact = `1555031${String(TYPES.indexOf(spec)).padStart(2, '0')}${via === 'url' ? '1' : '0'}0`;
        const bytes = randomBytes(20_000 + Math.floor(Math.random() * 5000));
        const path = `/${spec.type}-${Date.now()}.bin`;
        files.set(path, bytes);
        const attachment = {
          type: spec.type,
          ...(via === 'url' ? { url: baseUrl + path } : { base64: bytes.toString('base64') }),
          mimeType: spec.mimeType,
          filename: `report-${spec.type}.bin`,
          caption: `caption for ${spec.type}`,
        };
        const record = await sendAndWait({ to: contact, attachment });
        expect(record.status, JSON.stringify(record)).to.be.oneOf(['sent', 'delivered', 'read']);
        const got = await arrived(contact, record.platformMessageId!);
        expect(got.type).to.equal(spec.type);
        expect(got.fileSha256).to.equal(sha256(bytes));
        expect(got.fileLength).to.equal(bytes.length);
        expect(got.mimetype).to.equal(spec.mimeType);
        if (spec.type === 'document') expect(got.fileName).to.equal(`report-${spec.type}.bin`);
        if (spec.caption) expect(got.caption).to.equal(`caption for ${spec.type}`);
        else {
          // Audio and stickers have no caption in WhatsApp: it follows as a text message.
          await waitFor(
            async () => (await stack.inbox(contact)).some((m) => m.text === `caption for ${spec.type}`),
            {
              what: 'caption as a follow-up text',
            },
          );
        }
      });
    }
  }

  it('When text comes with an image without caption, then the text is the caption; with a caption, the text follows', async () => {
    const contact = '15550320001';
    const bytes = randomBytes(10_000);
    const plain = await sendAndWait({
      to: contact,
      text: 'see attached',
      attachment: { type: 'image', base64: bytes.toString('base64') },
    });
    expect((await arrived(contact, plain.platformMessageId!)).caption).to.equal('see attached');
    const both = await sendAndWait({
      to: contact,
      text: 'and a note',
      attachment: {
        type: 'document',
        base64: bytes.toString('base64'),
        caption: 'the doc',
        filename: 'a.pdf',
      },
    });
    expect((await arrived(contact, both.platformMessageId!)).caption).to.equal('the doc');
    await waitFor(
      async () => (await stack.inbox(contact)).filter((m) => m.text === 'and a note').length === 1,
      {
        what: 'the text after the document',
      },
    );
  });

  it('When replying to an earlier message, then the contact sees it quoted; an unknown target fails with a reason', async () => {
    const contact = '15550320002';
    const first = await sendAndWait({ to: contact, text: 'original' });
    const reply = await sendAndWait({ to: contact, text: 'the reply', existingMessageId: first.messageId });
    const got = await arrived(contact, reply.platformMessageId!);
    expect(got).to.include({ text: 'the reply', quotedId: first.platformMessageId });
    const bad = await sendAndWait({ to: contact, text: 'orphan', existingMessageId: 'no-such-message' });
    expect(bad).to.include({ status: 'failed', error: 'reply_target_not_found' });
  });

  it('When replying to messages a contact wrote (a text, an image with a caption), then the contact sees each quoted with its words and as its own', async () => {
    const contact = '15550320003';
    /** Our messageId of what the contact wrote (its WhatsApp id: `platformId`). */
    async function written(
      body: Record<string, unknown>,
    ): Promise<{ messageId: string; platformId: string }> {
      const sent = await stack.simApi<{ id: string }>('POST', `/contacts/${contact}/send`, {
        to: account,
        ...body,
      });
      let messageId = '';
      await waitFor(
        async () => {
          const list = await stack.api<{
            data: { messages: { messageId: string; platformMessageId: string }[] };
          }>('GET', '/messages?direction=inbound');
          messageId = list.body.data.messages.find((m) => m.platformMessageId === sent.id)?.messageId ?? '';
          return messageId !== '';
        },
        { what: "the contact's message recorded" },
      );
      return { messageId, platformId: sent.id };
    }
    const question = await written({ text: 'Do you open on Sunday?' });
    const answer = await sendAndWait({
      to: contact,
      text: 'Yes, 10 to 4',
      existingMessageId: question.messageId,
    });
    expect(answer.status, JSON.stringify(answer)).to.equal('sent');
    const got = await arrived(contact, answer.platformMessageId!);
    expect(got).to.include({
      text: 'Yes, 10 to 4',
      quotedId: question.platformId,
      quotedText: 'Do you open on Sunday?',
      quotedAuthor: `${contact}@s.whatsapp.net`,
    });

    const photo = await written({
      text: 'this one?',
      attachment: { type: 'image', base64: randomBytes(400).toString('base64'), mimeType: 'image/jpeg' },
    });
    const pick = await sendAndWait({ to: contact, text: 'That one', existingMessageId: photo.messageId });
    expect(await arrived(contact, pick.platformMessageId!)).to.include({
      text: 'That one',
      quotedId: photo.platformId,
      quotedText: 'this one?',
      quotedAuthor: `${contact}@s.whatsapp.net`,
    });
  });

  it('When the attachment URL is unreachable or over 10 MB, then the message fails at once with the reason', async () => {
    const missing = await sendAndWait({
      to: '15550320003',
      attachment: { type: 'image', url: `${baseUrl}/missing.jpg` },
    });
    expect(missing).to.include({ status: 'failed', error: 'attachment_unreachable' });
    files.set('/huge.bin', Buffer.alloc(10 * 1024 * 1024 + 1));
    const huge = await sendAndWait({
      to: '15550320003',
      attachment: { type: 'document', url: `${baseUrl}/huge.bin` },
    });
    expect(huge).to.include({ status: 'failed', error: 'attachment_too_large' });
  });

  it('When an attachment URL points at loopback (by IP, by name, IPv4-mapped, as an integer, or behind a redirect from an allowed host), then it is never contacted and the message fails attachment_url_not_allowed', async () => {
    const urls = [
      `http://127.0.0.1:${secretPort}/metrics`,
      `http://localhost:${secretPort}/metrics`,
      `http://[::ffff:127.0.0.1]:${secretPort}/metrics`,
      `http://2130706433:${secretPort}/metrics`,
      `${baseUrl}/to-secret`,
    ];
    for (const [i, url] of urls.entries()) {
      const record = await sendAndWait({ to: `155503400${i}0`, attachment: { type: 'document', url } });
      expect(record, url).to.include({ status: 'failed', error: 'attachment_url_not_allowed' });
    }
    expect(secretHits).to.equal(0);
  });

  it('When a list gets the same media, then it is uploaded to WhatsApp once and every contact receives it', async () => {
    const uploaded = async () => {
      const text = await (await fetch(`http://127.0.0.1:${stack.senders()[0]!.port}/metrics`)).text();
      return Number(/^mgw_media_upload_bytes_total\{type="video"\} (\d+)/m.exec(text)?.[1] ?? 0);
    };
    const before = await uploaded();
    const bytes = randomBytes(30_000);
    const to = Array.from({ length: 5 }, (_, i) => `155503300${i}0`);
    const res = await stack.api<{ messageIds: string[] }>('POST', '/send', {
      to,
      attachment: { type: 'video', base64: bytes.toString('base64'), caption: 'for everyone' },
    });
    expect(res.body.messageIds).to.have.length(5);
    for (const phone of to) {
      await waitFor(async () => (await stack.inbox(phone)).length === 1, { what: `video at ${phone}` });
      expect((await stack.inbox(phone))[0]).to.include({
        fileSha256: sha256(bytes),
        caption: 'for everyone',
      });
    }
    expect((await uploaded()) - before).to.equal(bytes.length);
  });
});
