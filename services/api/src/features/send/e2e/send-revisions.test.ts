import { expect } from 'chai';
import type { Job } from 'bullmq';
import { ERRORS, keys, type SendJobData } from '@mgw/contracts';
import { ContentStore, Encryption, MessageRevisions } from '@mgw/store';
import {
  call,
  createToken,
  freshDeviceId,
  markConnected,
  startApi,
  type TestApi,
} from '../../../../test/helpers/api.js';

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
