import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { keys, newPlatformMessageId, ERRORS, type DeviceCommandReply } from '@mgw/contracts';
import { createRedis } from '@mgw/common';
import { DeviceCommandResponder, storageContext } from '@mgw/store';
import {
  call,
  createToken,
  freshDeviceId,
  markConnected,
  startApi,
  type TestApi,
} from '../../../../test/helpers/api.js';

/**
 * The message reads' route tests, each against the real app and Redis:
 * - GET /messages, the pages of the message index;
 * - GET /messages/:id/media, an inbound message's media handed over by the device's holder.
 */

interface Page {
  messages: { messageId: string; text?: string; direction: string }[];
  nextCursor?: string;
}

/**
 * GET /messages' pages against the real app and Redis: newest first through the message index, a
 * cursor that covers every message once, a page filled past records that expired (their ids
 * dropped from the index), and a filter that skips what it does not want.
 */
describe('GET /messages (pages of the message index)', () => {
  let t: TestApi;
  let deviceId: string;
  let token: string;

  before(async () => {
    t = await startApi();
  });
  beforeEach(async () => {
    deviceId = freshDeviceId();
    token = await createToken(t, { deviceId });
  });
  after(() => t.close());

  const receive = async (n: number): Promise<string> =>
    (await t.services.inbound.record(deviceId, {
      platformMessageId: newPlatformMessageId(),
      from: '15552700001',
      contact: { phone: '15552700001' },
      text: `message ${n}`,
      receivedAt: new Date(),
      waKey: { remoteJid: '15552700001@s.whatsapp.net' },
    })) as string;
  const page = async (query: string): Promise<Page> => {
    const res = await call(`${t.api}/messages?${query}`, { token });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body.data as Page;
  };

  it('When a device has more messages than a page, then the cursor pages through each once, newest first, and the last page has no cursor', async () => {
    for (let n = 1; n <= 7; n++) await receive(n);
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const p = await page(`limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      expect(p.messages.length).to.be.at.most(3);
      seen.push(...p.messages.map((m) => m.text!));
      cursor = p.nextCursor;
      pages++;
    } while (cursor && pages < 10);
    expect(seen).to.deep.equal([7, 6, 5, 4, 3, 2, 1].map((n) => `message ${n}`));
    expect(pages).to.equal(3);
    // A page as long as what is left ends there: no cursor to an empty page.
    expect((await page('limit=7')).nextCursor).to.equal(undefined);
  });

  it('When records of the page expired, then the page still fills to its limit from older ones and their ids leave the index', async () => {
    const ids: string[] = [];
    for (let n = 1; n <= 6; n++) ids.push(await receive(n));
    // The two newest expired (their records gone, their ids still indexed).
    await t.redis.del(keys.message(deviceId, ids[5]!), keys.message(deviceId, ids[4]!));
    const first = await page('limit=3');
    expect(first.messages.map((m) => m.text)).to.deep.equal(['message 4', 'message 3', 'message 2']);
    expect(first.nextCursor).to.be.a('string');
    const rest = await page(`limit=3&cursor=${first.nextCursor}`);
    expect(rest.messages.map((m) => m.text)).to.deep.equal(['message 1']);
    expect(rest.nextCursor).to.equal(undefined);
    expect(await t.redis.zscore(keys.messageIndex(deviceId), ids[5]!)).to.equal(null);
  });

  it('When a filter skips messages, then the page holds only those it wants', async () => {
    for (let n = 1; n <= 4; n++) await receive(n);
    expect((await page('limit=2&direction=outbound')).messages).to.deep.equal([]);
    const inbound = await page('limit=2&direction=inbound');
    expect(inbound.messages.map((m) => m.text)).to.deep.equal(['message 4', 'message 3']);
    expect(inbound.nextCursor).to.be.a('string');
  });

  it('When a sent message is still queued (its job holds it, no record yet), then the page shows it queued among the received ones', async () => {
    await markConnected(t.redis, deviceId);
    await receive(1);
    const sent = await call(`${t.api}/send`, {
      token,
      method: 'POST',
      json: { to: '15552700001', text: 'queued one' },
    });
    expect(sent.status, JSON.stringify(sent.body)).to.equal(202);
    const messageId = String(sent.body.messageId);
    expect(await t.redis.exists(keys.message(deviceId, messageId)), 'no record while queued').to.equal(0);
    await receive(2);
    const p = await page('limit=5');
    expect(p.messages.map((m) => m.messageId)).to.include(messageId);
    expect(p.messages.map((m) => m.text ?? (m as { status?: string }).status)).to.deep.equal([
      'message 2',
      'queued',
      'message 1',
    ]);
    expect(p.nextCursor).to.equal(undefined);
  });
});

describe('GET /messages/:id/media', () => {
  let t: TestApi;
  let deviceId: string;
  let token: string;
  let messageId: string;
  let subscriber: Redis | undefined;
  const failures: unknown[] = [];
  const file = Buffer.from('%PDF-1.4 a small invoice\n'.repeat(20));

  /** A stand-in for the sender holding the device: hands `file` over, or answers `failure`. */
  async function startHolder(failure?: DeviceCommandReply): Promise<void> {
    subscriber = createRedis(t.config.redis.url, 'subscriber', 'test-holder');
    await new DeviceCommandResponder(subscriber, t.redis).listen(
      async (cmd, reply) => {
        if (cmd.type !== 'download-media' || cmd.deviceId !== deviceId) return;
        if (failure) return reply(failure);
        const key = keys.mediaDownload(deviceId, cmd.requestId);
        const bytes = t.services.encryption.seal(file, storageContext(key, 'bytes'));
        await t.redis.hset(key, { bytes, mimeType: 'application/pdf', fileName: 'invoice.pdf' });
        await reply({ ok: true });
      },
      (err) => failures.push(err),
    );
  }

  before(async () => {
    t = await startApi();
  });
  beforeEach(async () => {
    deviceId = freshDeviceId();
    token = await createToken(t, { deviceId });
    messageId = (await t.services.inbound.record(deviceId, {
      platformMessageId: `3EB0${Date.now()}`,
      from: '15550001234',
      contact: { phone: '15550001234' },
      attachment: {
        type: 'document',
        mimeType: 'application/pdf',
        fileName: 'invoice.pdf',
        size: file.length,
      },
      receivedAt: new Date(),
      mediaMessage: Buffer.from('the WebMessageInfo'),
    }))!;
  });
  afterEach(async () => {
    await subscriber?.quit();
    subscriber = undefined;
    expect(failures.splice(0), 'the holder failed').to.deep.equal([]);
  });
  after(async () => {
    await t.close();
  });

  it('When the holder of the device downloads the attachment, then the answer is its bytes, type and name, and the hand-over key is gone', async () => {
    await startHolder();
    const res = await fetch(`${t.api}/messages/${messageId}/media`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('application/pdf');
    expect(res.headers.get('content-disposition')).to.equal("attachment; filename*=UTF-8''invoice.pdf");
    expect(Buffer.from(await res.arrayBuffer()).equals(file)).to.equal(true);
    expect(await t.redis.keys(keys.mediaDownload(deviceId, '*'))).to.deep.equal([]);
  });

  it('When the holder cannot download it, then the answer is 502', async () => {
    await startHolder({ ok: false, error: 'download failed' });
    const res = await call(`${t.api}/messages/${messageId}/media`, { token });
    expect(res.status).to.equal(502);
    expect(res.body).to.include({ success: false, error: ERRORS.mediaUnavailable });
  });

  it('When no sender holds the device, then the answer is 409 at once', async () => {
    const started = Date.now();
    const res = await call(`${t.api}/messages/${messageId}/media`, { token });
    expect(res.status).to.equal(409);
    expect(res.body).to.include({ success: false, error: ERRORS.noDevice });
    // Without asking anyone (a holder's answer is waited for up to 15 s): quiet: 120 ms.
    expect(Date.now() - started).to.be.below(10_000);
  });

  it("When the message is unknown, another device's, or one sent through the gateway, then 404 saying which, and no holder is asked", async () => {
    await startHolder();
    const other = await createToken(t, { deviceId: freshDeviceId() });
    const notTheirs = await call(`${t.api}/messages/${messageId}/media`, { token: other });
    expect(notTheirs.status).to.equal(404);
    expect(notTheirs.body).to.include({ success: false, error: ERRORS.messageNotFound });
    const unknown = await call(`${t.api}/messages/00000000-0000-4000-8000-000000000000/media`, { token });
    expect(unknown.status).to.equal(404);
    expect(unknown.body).to.include({ error: ERRORS.messageNotFound });
    await markConnected(t.redis, deviceId);
    const sent = await call(`${t.api}/send`, {
      token,
      method: 'POST',
      json: { to: '15550001234', text: 'hi' },
    });
    const own = await call(`${t.api}/messages/${String(sent.body.messageId)}/media`, { token });
    expect(own.status).to.equal(404);
    expect(own.body).to.include({ error: ERRORS.mediaNotFound });
    expect(await t.redis.keys(keys.mediaDownload(deviceId, '*'))).to.deep.equal([]);
  });
});
