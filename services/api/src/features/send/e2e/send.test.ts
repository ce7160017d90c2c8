import { expect } from 'chai';
import type { Job } from 'bullmq';
import { PRIORITY, keys, type SendJobData, ERRORS } from '@mgw/contracts';
import { ContentStore, Encryption, markLinked, markUnlinked, MessageRevisions } from '@mgw/store';
import {
  call,
  createToken,
  freshDeviceId,
  markConnected,
  startApi,
  type TestApi,
} from '../../../../test/helpers/api.js';

/**
 * POST /send's core route tests, each against the real app and Redis:
 * - POST /send (one number or a list, attachments, the device's state, quotas, Idempotency-Key)
 *   and GET /messages/:id;
 * - POST /send `edit`, `delete` and `linkPreview`.
 * Personalised lists, scheduled sends, volume and the message kinds: send-lists-and-kinds.test.ts.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('POST /send', () => {
  let t: TestApi;
  let deviceId: string;
  let token: string;
  before(async () => (t = await startApi({ maxRecipients: 1000 })));
  beforeEach(async () => {
    deviceId = freshDeviceId();
    token = await createToken(t, { deviceId });
    await markConnected(t.redis, deviceId);
  });
  afterEach(async () => {
    await t.services.acceptor.queue(deviceId).obliterate({ force: true });
  });
  after(async () => t.close());

  const send = (json: unknown, headers?: Record<string, string>) =>
    call(`${t.api}/send`, { token, json, ...(headers ? { headers } : {}) });
  const job = async (id: string) =>
    (await t.services.acceptor.queue(deviceId).getJob(id)) as Job<SendJobData>;
  const contentOf = async (j: Job<SendJobData>) =>
    (await new ContentStore(t.redis, Encryption.fromEnv(), 60).get(deviceId, j.data.contentId))?.content;

  it('When `to` is one number, then 202 {success, messageId}, one queued job (ids only) and its content stored once', async () => {
    const res = await send({ to: '15551234567', text: 'hello' });

    expect(res.status).to.equal(202);
    expect(res.body).to.have.keys('success', 'messageId');
    expect(res.body.success).to.equal(true);
    const messageId = String(res.body.messageId);
    expect(messageId).to.match(UUID);
    const j = await job(messageId);
    expect(j.id).to.equal(messageId);
    expect(j.opts.priority).to.equal(PRIORITY.send);
    expect(j.opts.attempts).to.equal(t.config.sendAttempts);
    expect(j.opts.backoff).to.deep.equal({ type: 'exponential', delay: t.config.sendBackoffMs });
    expect(j.data).to.include({ kind: 'send', messageId, deviceId, to: '15551234567' });
    expect(j.data).to.not.have.any.keys('text', 'attachment');
    expect(j.data.platformMessageId).to.match(/^3EB0[0-9A-F]{18}$/);
    expect(j.data.batchId).to.equal(undefined);
    expect(await contentOf(j)).to.deep.equal({ text: 'hello' });
    expect(await t.redis.ttl(keys.content(deviceId, j.data.contentId))).to.be.greaterThan(0);
    const record = await t.services.messages.get(deviceId, messageId);
    expect(record).to.include({ messageId, deviceId, to: '15551234567', status: 'queued', kind: 'send' });
    expect(record?.platformMessageId).to.equal(j.data.platformMessageId);
  });

  it('When `to` is a list of one, then 202 with a batch id and messageIds', async () => {
    const res = await send({ to: ['15551234567'], text: 'hello' });

    expect(res.status).to.equal(202);
    expect(res.body).to.have.keys('success', 'messageId', 'messageIds');
    const ids = res.body.messageIds as string[];
    expect(ids).to.have.length(1);
    expect(res.body.messageId).to.match(UUID).and.not.equal(ids[0]);
    expect((await job(ids[0]!)).data.batchId).to.equal(res.body.messageId);
  });

  it('When the device is only pairing (connecting, not linked), then 409 No connected messenger device found and nothing is queued', async () => {
    await t.redis.hset(keys.session(deviceId), 'status', 'connecting');
    const res = await send({ to: '15551234567', text: 'hello' });
    expect(res.status).to.equal(409);
    expect(res.body).to.deep.equal({ success: false, error: 'No connected messenger device found' });
    expect(await t.services.acceptor.queue(deviceId).count()).to.equal(0);
  });

  it('When a linked device is reconnecting (connecting), then the message is accepted and waits in its queue', async () => {
    await t.redis.hset(keys.session(deviceId), 'status', 'connecting');
    await markLinked(t.redis, deviceId);
    try {
      const res = await send({ to: '15551234567', text: 'hello' });
      expect(res.status).to.equal(202);
      expect(await t.services.acceptor.queue(deviceId).count()).to.equal(1);
    } finally {
      await markUnlinked(t.redis, deviceId);
    }
  });

  it('When the device was logged out (and linked again) since the API last wrote for it, then nothing is written with the old link: 409 while it is out, and then jobs of the new link', async () => {
    // The accept call checks the device and writes in one Lua call: a logout lands before or after
    // it, never in between. The API remembers the link generation from its previous call; one
    // that changed since is found by the call, which writes nothing for the stale jobs.
    const first = await send({ to: '15551234567', text: 'hello' });
    expect(first.status).to.equal(202);
    const generation = (await job(String(first.body.messageId))).data.linkGeneration;
    // A logout: a new link generation, the device away.
    await t.redis.hincrby(keys.session(deviceId), 'linkGeneration', 1);
    await t.redis.hset(keys.session(deviceId), 'status', 'disconnected');
    const contentsBefore = await t.redis.keys(keys.content(deviceId, '*'));
    const out = await send({ to: ['15551234567', '15551234568'], text: 'hello' });
    expect(out.status).to.equal(409);
    expect(out.body).to.deep.equal({ success: false, error: 'No connected messenger device found' });
    expect(await t.services.acceptor.queue(deviceId).count()).to.equal(1);
    expect(await t.redis.keys(keys.content(deviceId, '*'))).to.deep.equal(contentsBefore);
    expect(await t.redis.hget(keys.deviceQueue(deviceId), 'messages')).to.equal('1');
    // Linked again (another generation) before the API hears of it: its jobs carry the new one.
    await t.redis.hincrby(keys.session(deviceId), 'linkGeneration', 1);
    await t.redis.hset(keys.session(deviceId), 'status', 'connected');
    const again = await send({ to: '15551234569', text: 'hello' });
    expect(again.status).to.equal(202);
    expect((await job(String(again.body.messageId))).data.linkGeneration).to.equal(generation + 2);
    expect(await t.services.acceptor.queue(deviceId).count()).to.equal(2);
    expect(await t.redis.hget(keys.deviceQueue(deviceId), 'messages')).to.equal('2');
  });

  it('When 1,000 recipients get one base64 attachment, then 1,000 jobs in `to` order, each queued, and the content with the media stored once', async () => {
    const to = Array.from({ length: 1000 }, (_, i) => String(15550000000 + i));
    const bytes = Buffer.from('%PDF-1.4 fake document');

    const res = await send({
      to,
      text: 'see attached',
      attachment: {
        type: 'document',
        base64: bytes.toString('base64'),
        filename: 'a.pdf',
        mimeType: 'application/pdf',
      },
    });

    expect(res.status).to.equal(202);
    const ids = res.body.messageIds as string[];
    expect(ids).to.have.length(1000);
    const jobs = await Promise.all(ids.map(job));
    expect(jobs.map((j) => j.id)).to.deep.equal(ids);
    expect(jobs.map((j) => j.data.to)).to.deep.equal(to);
    const stored = await t.redis.keys(keys.content(deviceId, '*'));
    expect(stored).to.have.length(1);
    for (const j of jobs) {
      expect(stored[0]).to.equal(keys.content(deviceId, j.data.contentId));
      expect(j.data).to.not.have.any.keys('text', 'attachment');
      expect(j.data.batchId).to.equal(res.body.messageId);
    }
    expect(await contentOf(jobs[0]!)).to.deep.equal({
      text: 'see attached',
      attachment: {
        type: 'document',
        source: { stored: true, size: bytes.length },
        filename: 'a.pdf',
        mimeType: 'application/pdf',
      },
    });
    const contents = new ContentStore(t.redis, Encryption.fromEnv(), 60);
    expect(await contents.media(deviceId, jobs[0]!.data.contentId)).to.deep.equal(bytes);
    expect(await t.redis.hget(keys.deviceQueue(deviceId), 'messages')).to.equal('1000');
    const records = await Promise.all(ids.slice(0, 20).map((id) => t.services.messages.get(deviceId, id)));
    expect(records.map((r) => r?.status)).to.deep.equal(ids.slice(0, 20).map(() => 'queued'));
  });

  it('When the attachment is a URL, then the content carries source {url} for the sender to fetch', async () => {
    const res = await send({
      to: '15551234567',
      attachment: { type: 'image', url: 'https://example.test/a.png', caption: 'c' },
    });
    expect(res.status).to.equal(202);
    expect((await contentOf(await job(String(res.body.messageId))))?.attachment).to.deep.equal({
      type: 'image',
      source: { url: 'https://example.test/a.png' },
      caption: 'c',
    });
  });

  it('When existingMessageId is given, then the content carries it for the reply', async () => {
    const res = await send({ to: '15551234567', text: 'reply', existingMessageId: 'abc-123' });
    expect((await contentOf(await job(String(res.body.messageId))))?.existingMessageId).to.equal('abc-123');
  });

  it('When the device already holds its quota of queued messages, then 429 with the counts and nothing is queued', async () => {
    await t.redis.hset(
      keys.deviceQueue(deviceId),
      'messages',
      String(t.config.deviceQuota.maxQueuedMessages - 1),
    );
    try {
      const res = await send({ to: ['15551234567', '15557654321'], text: 'x' });
      expect(res.status).to.equal(429);
      expect(res.body).to.deep.include({
        success: false,
        error: 'Too many messages are queued for this device; wait until some are sent',
      });
      expect(await t.services.acceptor.queue(deviceId).count()).to.equal(0);
      expect((await send({ to: '15551234567', text: 'one fits' })).status).to.equal(202);
    } finally {
      await t.redis.del(keys.deviceQueue(deviceId));
    }
  });

  it('When the same Idempotency-Key and body are sent again, then the first response is replayed and nothing more is queued', async () => {
    const body = { to: ['15551234567', '15557654321'], text: 'once' };
    const first = await send(body, { 'Idempotency-Key': 'order-1' });
    const second = await send(body, { 'Idempotency-Key': 'order-1' });

    expect(second.status).to.equal(first.status).and.equal(202);
    expect(second.body).to.deep.equal(first.body);
    expect(second.headers.get('idempotent-replayed')).to.equal('true');
    expect(await t.services.acceptor.queue(deviceId).count()).to.equal(2);
  });

  it('When the same Idempotency-Key comes with a different body, then 422', async () => {
    await send({ to: '15551234567', text: 'one' }, { 'Idempotency-Key': 'k-2' });
    const res = await send({ to: '15551234567', text: 'two' }, { 'Idempotency-Key': 'k-2' });
    expect(res.status).to.equal(422);
    expect(res.body).to.deep.equal({
      success: false,
      error: 'Idempotency-Key was already used with a different request',
    });
  });

  it('When a request with the same Idempotency-Key is still in flight, then 409', async () => {
    const { hashToken, storageContext } = await import('@mgw/store');
    const body = { to: '15551234567', text: 'slow' };
    // The claim a first, still-running request leaves behind (same fingerprint: replay it once to learn it).
    await send(body, { 'Idempotency-Key': 'k-3' });
    const key = keys.idempotency(hashToken(token), 'k-3');
    const enc = t.services.encryption;
    const stored = JSON.parse(enc.openText((await t.redis.get(key))!, storageContext(key))) as {
      fingerprint: string;
    };
    const claim = JSON.stringify({ fingerprint: stored.fingerprint, state: 'in_progress' });
    await t.redis.set(key, enc.sealText(claim, storageContext(key)), 'EX', 60);

    const res = await send(body, { 'Idempotency-Key': 'k-3' });
    expect(res.status).to.equal(409);
    expect(res.body).to.deep.equal({
      success: false,
      error: 'A request with this Idempotency-Key is still in progress',
    });
  });

  it('When a request is refused before it does anything (409 no device), then its Idempotency-Key is free to retry', async () => {
    await t.redis.del(keys.session(deviceId));
    const refused = await send({ to: '15551234567', text: 'x' }, { 'Idempotency-Key': 'k-4' });
    await markConnected(t.redis, deviceId);
    const retried = await send({ to: '15551234567', text: 'x' }, { 'Idempotency-Key': 'k-4' });
    expect([refused.status, retried.status]).to.deep.equal([409, 202]);
  });

  it('When the enqueue transaction fails after Redis applied part of it, then its messages end failed (enqueue_failed) and none stays queued', async () => {
    // A command of the transaction fails when it runs (Redis does not roll back the others).
    const contents = (t.services.acceptor as unknown as { deps: { contents: ContentStore } }).deps.contents;
    const original = contents.stage.bind(contents);
    contents.stage = (multi, ...rest) => {
      original(multi, ...rest);
      multi.hincrby(keys.content(deviceId, rest[1]), 'body', 1);
    };
    let ids: string[] = [];
    try {
      const res = await send({ to: ['15551234567', '15557654321'], text: 'x' });
      expect(res.status).to.equal(500);
      expect(res.body).to.deep.equal({ success: false, error: 'Internal server error' });
    } finally {
      contents.stage = original;
    }
    // The withdrawal runs right after the failure; wait for it without a fixed sleep.
    for (;;) {
      ids = (await t.redis.keys(keys.message(deviceId, '*'))).sort();
      const statuses = await Promise.all(ids.map((k) => t.redis.hget(k, 'status')));
      if (ids.length === 2 && statuses.every((s) => s === 'failed')) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(await Promise.all(ids.map((k) => t.redis.hget(k, 'error')))).to.deep.equal([
      'enqueue_failed',
      'enqueue_failed',
    ]);
    expect(await t.services.acceptor.queue(deviceId).count()).to.equal(0);
  });
});

describe('GET /messages/:id', () => {
  let t: TestApi;
  before(async () => (t = await startApi()));
  after(async () => t.close());

  it("When the id is one of the token's device's messages, then 200 with the record; otherwise 404", async () => {
    const deviceId = freshDeviceId();
    const other = freshDeviceId();
    const token = await createToken(t, { deviceId });
    const otherToken = await createToken(t, { deviceId: other });
    await markConnected(t.redis, deviceId);
    const sent = await call(`${t.api}/send`, { token, json: { to: '15551234567', text: 'hi' } });
    const id = String(sent.body.messageId);

    const mine = await call(`${t.api}/messages/${id}`, { token });
    const foreign = await call(`${t.api}/messages/${id}`, { token: otherToken });
    const unknown = await call(`${t.api}/messages/does-not-exist`, { token });

    expect(mine.status).to.equal(200);
    expect(mine.body.success).to.equal(true);
    expect(mine.body.data).to.include({
      messageId: id,
      deviceId,
      to: '15551234567',
      status: 'queued',
      kind: 'send',
    });
    for (const res of [foreign, unknown]) {
      expect(res.status).to.equal(404);
      expect(res.body).to.deep.equal({ success: false, error: 'Message not found' });
    }
    await t.services.acceptor.queue(deviceId).obliterate({ force: true });
  });
});

/** POST /send `edit`, `delete`, `linkPreview` at the API (answers checked against the OpenAPI document). */
describe('POST /send edit, delete and linkPreview', () => {
  let t: TestApi;
  let deviceId: string;
  let token: string;
  const to = '15551234567';
  before(async () => (t = await startApi({ maxRecipients: 1000 })));
  beforeEach(async () => {
    deviceId = freshDeviceId();
    token = await createToken(t, { deviceId });
    await markConnected(t.redis, deviceId);
  });
  afterEach(async () => {
    await t.services.acceptor.queue(deviceId).obliterate({ force: true });
  });
  after(async () => t.close());

  const send = (json: unknown) => call(`${t.api}/send`, { token, json });
  const job = async (id: string) =>
    (await t.services.acceptor.queue(deviceId).getJob(id)) as Job<SendJobData>;
  const contentOf = async (id: string) =>
    (await new ContentStore(t.redis, Encryption.fromEnv(), 60).get(deviceId, (await job(id)).data.contentId))
      ?.content;
  /** A text of ours, sent `agoMs` ago. */
  async function sentText(agoMs = 1000): Promise<string> {
    const id = String((await send({ to, text: 'hello' })).body.messageId);
    const data = (await job(id)).data;
    await t.services.messages.claim(data);
    await t.services.messages.markSent(data, new Date(Date.now() - agoMs));
    return id;
  }

  it('When an edit or delete is malformed or combined with content, then 400 naming the field', async () => {
    const id = await sentText();
    const cases: [unknown, string][] = [
      [{ to, edit: { messageId: id, text: '' } }, 'edit'],
      [{ to, edit: { messageId: id } }, 'edit'],
      [{ to, edit: { messageId: id, text: 'x' }, text: 'y' }, 'edit'],
      [
        { to, delete: { messageId: id }, attachment: { type: 'image', url: 'https://example.com/a.png' } },
        'delete',
      ],
      [{ to, edit: { messageId: id, text: 'x' }, delete: { messageId: id } }, 'edit'],
      [{ to, delete: { messageId: id }, sendAt: '2030-01-01T00:00:00Z' }, 'delete'],
      [{ to, delete: {} }, 'delete'],
      [{ to, text: 'x', linkPreview: 'yes' }, 'linkPreview'],
    ];
    for (const [body, field] of cases) {
      const res = await send(body);
      expect(res.status, JSON.stringify(body)).to.equal(400);
      const details = res.body.details as { path: string[] }[];
      expect(
        details.some((d) => d.path[0] === field),
        JSON.stringify(details),
      ).to.equal(true);
    }
    // `to` must be the target's recipient, as one number.
    expect((await send({ to: [to], delete: { messageId: id } })).status).to.equal(400);
    expect((await send({ to: '15557654321', delete: { messageId: id } })).status).to.equal(400);
    const unknown = await send({ to, delete: { messageId: 'no-such-message' } });
    expect(unknown.status).to.equal(404);
    expect(unknown.body.error).to.equal(ERRORS.revisionTargetNotFound);
  });

  it('When the target was sent within the window, then 202 and a job carrying only the edit or the delete', async () => {
    const id = await sentText(14 * 60_000);
    const edit = await send({ to, edit: { messageId: id, text: 'new text' } });
    expect(edit.status).to.equal(202);
    expect(await contentOf(String(edit.body.messageId))).to.deep.equal({
      edit: { messageId: id, text: 'new text' },
    });
    const del = await send({ to, delete: { messageId: id } });
    expect(del.status).to.equal(202);
    expect(await contentOf(String(del.body.messageId))).to.deep.equal({ delete: { messageId: id } });
  });

  it('When the window has passed, then 409 with the window in the error and no job', async () => {
    const lateEdit = await sentText(15 * 60_000 + 1000);
    const before = await t.services.acceptor.queue(deviceId).count();
    const edit = await send({ to, edit: { messageId: lateEdit, text: 'too late' } });
    expect(edit.status).to.equal(409);
    expect(edit.body).to.deep.equal({ success: false, error: ERRORS.editWindowPassed });
    const lateDelete = await sentText(60 * 3600_000 + 1000);
    const after = await t.services.acceptor.queue(deviceId).count();
    const del = await send({ to, delete: { messageId: lateDelete } });
    expect(del.status).to.equal(409);
    expect(del.body).to.deep.equal({ success: false, error: ERRORS.deleteWindowPassed });
    expect(await t.services.acceptor.queue(deviceId).count()).to.equal(after);
    expect(after).to.equal(before + 1); // only the second target's own job
  });

  it('When the target is still queued, then an edit is 409 and a delete takes it out of the queue (200) for good', async () => {
    const id = String((await send({ to, text: 'not yet sent' })).body.messageId);
    const edit = await send({ to, edit: { messageId: id, text: 'x' } });
    expect(edit.status).to.equal(409);
    expect(edit.body.error).to.equal(ERRORS.notEditable);
    const del = await send({ to, delete: { messageId: id } });
    expect(del.status).to.equal(200);
    expect(del.body).to.deep.equal({ success: true, messageId: id, status: 'deleted' });
    expect(await t.services.messages.claim((await job(id)).data)).to.equal('deleted');
    const again = await send({ to, delete: { messageId: id } });
    expect(again.status).to.equal(409);
    expect(again.body.error).to.equal(ERRORS.notDeletable);
    const read = await call(`${t.api}/messages/${id}`, { token });
    expect(read.body.data).to.include({ status: 'deleted' });
    // The device's queue quota was given back with it.
    expect(Number(await t.redis.hget(keys.deviceQueue(deviceId), 'messages'))).to.equal(0);
  });

  it('When a sent text was edited, then GET /messages/:id shows its edits and current text; linkPreview false is kept with the content', async () => {
    const id = await sentText();
    const record = (await t.services.messages.get(deviceId, id))!;
    const revisions = new MessageRevisions(t.redis, Encryption.fromEnv(), 60);
    await revisions.recordEdit({
      deviceId,
      messageId: id,
      platformMessageId: record.platformMessageId,
      direction: 'outbound',
      phone: to,
      editId: 'EDIT1',
      text: 'edited text',
      at: new Date(),
    });
    const read = await call(`${t.api}/messages/${id}`, { token });
    expect(read.status).to.equal(200);
    expect(read.body.data).to.deep.include({ text: 'edited text' });
    expect((read.body.data as { edits: { text: string }[] }).edits.map((e) => e.text)).to.deep.equal([
      'edited text',
    ]);
    const noPreview = await send({ to, text: 'see https://example.com', linkPreview: false });
    expect(await contentOf(String(noPreview.body.messageId))).to.deep.equal({
      text: 'see https://example.com',
      linkPreview: false,
    });
  });
});
