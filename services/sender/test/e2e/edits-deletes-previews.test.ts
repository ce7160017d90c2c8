import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { BULL_PREFIX, ERRORS, keys, sendQueueName } from '@mgw/contracts';
import type { InboxMessage } from '@mgw/messenger-sim';
import { useStack, waitFor } from '@mgw/testing';

interface Record_ {
  status: string;
  platformMessageId: string;
  sentAt?: string;
  deletedAt?: string;
  text?: string;
  edits?: { text: string; at: string }[];
}

/**
 * Issue 29 through the real client and the simulator: edits and deletes for everyone of our
 * texts (and their windows), contacts' edits and deletes, link previews fetched through the
 * outbound guard, and "typing…" before a paced text. Pacing is on (1.2 s between messages) so
 * typing shows; 127.0.0.1 is allow-listed for the preview page, 127.0.0.2 is not.
 */
describe('e2e: edits, deletes, link previews and typing (real services, simulator)', function () {
  this.timeout(180_000);
  const stack = useStack({ env: { ALLOWED_PRIVATE_HOSTS: '127.0.0.1' } });
  const account = '15550290001';
  const contact = '15550290002';
  let page: Server;
  let pageUrl = '';
  let refused: Server;
  let refusedUrl = '';
  let refusedHits = 0;

  before(async () => {
    // Paced, so a text is preceded by "typing…" (the policy's default), before the first send.
    await stack().redis.hset(keys.deviceSettings(stack().deviceId), 'sendGapMs', '1200');
    page = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(
        '<html><head><title>fallback</title><meta property="og:title" content="Preview &amp; Title">' +
          '<meta name="description" content="A page served on 127.0.0.1"></head><body>hi</body></html>',
      );
    });
    await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
    pageUrl = `http://127.0.0.1:${(page.address() as AddressInfo).port}/article`;
    refused = createServer((_req, res) => {
      refusedHits++;
      res.end('<title>must not be fetched</title>');
    });
    await new Promise<void>((resolve) => refused.listen(0, '127.0.0.2', resolve));
    refusedUrl = `http://127.0.0.2:${(refused.address() as AddressInfo).port}/secret`;
    await stack().linkByQr(account);
  });

  after(async () => {
    page?.close();
    refused?.close();
  });

  const send = (body: Record<string, unknown>) =>
    stack().api<{ success: boolean; messageId: string; error?: string; status?: string }>('POST', '/send', {
      to: contact,
      ...body,
    });
  const record = async (id: string) =>
    (await stack().api<{ data: Record_ }>('GET', `/messages/${id}`)).body.data;
  const inboxEntry = async (pred: (m: InboxMessage) => boolean): Promise<InboxMessage> => {
    let found: InboxMessage | undefined;
    await waitFor(async () => Boolean((found = (await stack().inbox(contact)).find(pred))), {
      timeoutMs: 30_000,
      what: 'the message at the contact',
    });
    return found!;
  };
  async function sentText(text: string): Promise<{ id: string; platformId: string }> {
    const res = await send({ text });
    expect(res.status).to.equal(202);
    const id = res.body.messageId;
    await waitFor(async () => ['sent', 'delivered', 'read'].includes((await record(id)).status), {
      timeoutMs: 30_000,
      what: 'sent',
    });
    return { id, platformId: (await record(id)).platformMessageId };
  }

  it('When a text is paced, then the contact sees "composing" before it arrives; an edit arrives with exactly the new text and the record keeps the history', async () => {
    const original = await sentText(`original ${Date.now()}`);
    const arrived = await inboxEntry((m) => m.id === original.platformId);
    const composingAt = async (phone: string) =>
      (
        await stack().simApi<{ updates: { from: string; state: string; at: string }[] }>(
          'GET',
          `/presence/${phone}`,
        )
      ).updates.filter((u) => u.from === account && u.state === 'composing');
    const composing = await composingAt(contact);
    expect(composing).to.have.length(1);
    expect(Date.parse(composing[0]!.at)).to.be.at.most(Date.parse(arrived.receivedAt));
    // An OTP is never preceded by "typing…" (a code is awaited).
    const otpPhone = '15550290003';
    const otp = await stack().api('POST', '/otp', { phone: otpPhone, code: '4321' });
    expect(otp.status).to.equal(200);
    expect(await composingAt(otpPhone)).to.deep.equal([]);

    const edit = await send({ edit: { messageId: original.id, text: 'edited: the new text' } });
    expect(edit.status).to.equal(202);
    const entry = await inboxEntry((m) => m.type === 'edit' && m.targetId === original.platformId);
    expect(entry).to.include({ text: 'edited: the new text', targetId: original.platformId });
    expect(entry.refused).to.equal(undefined);
    await waitFor(async () => (await record(original.id)).edits?.length === 1, { what: 'the edit recorded' });
    const edited = await record(original.id);
    expect(edited.text).to.equal('edited: the new text');
    expect(edited.edits![0]!.text).to.equal('edited: the new text');
    expect(edited.status).to.be.oneOf(['sent', 'delivered', 'read']);
    // The edit's text is sealed at rest.
    const raw = await stack().redis.hgetall(keys.message(stack().deviceId, original.id));
    expect(JSON.stringify(raw)).not.to.include('edited: the new text');
    expect((await inboxEntry((m) => m.id === original.platformId)).editedText).to.equal(
      'edited: the new text',
    );
    // Nor is an edit.
    expect(await composingAt(contact)).to.have.length(1);
  });

  it('When a sent text is deleted for everyone, then a revoke arrives and the record ends deleted; a queued one is never sent', async () => {
    const target = await sentText(`to delete ${Date.now()}`);
    const del = await send({ delete: { messageId: target.id } });
    expect(del.status).to.equal(202);
    const entry = await inboxEntry((m) => m.type === 'delete' && m.targetId === target.platformId);
    expect(entry.refused).to.equal(undefined);
    await waitFor(async () => (await record(target.id)).status === 'deleted', { what: 'deleted' });
    expect((await record(target.id)).deletedAt).to.be.a('string');
    expect((await inboxEntry((m) => m.id === target.platformId)).deleted).to.equal(true);
    // A second delete, or an edit of a deleted message: refused, nothing sent.
    expect((await send({ delete: { messageId: target.id } })).status).to.equal(409);
    expect((await send({ edit: { messageId: target.id, text: 'x' } })).status).to.equal(409);

    // Scheduled a moment ahead: deleted while queued, it is taken out of the queue (200).
    const text = `scheduled then deleted ${Date.now()}`;
    const scheduled = await send({ text, sendAt: new Date(Date.now() + 3000).toISOString() });
    const gone = await send({ delete: { messageId: scheduled.body.messageId } });
    expect(gone.status).to.equal(200);
    expect(gone.body).to.include({ success: true, status: 'deleted' });
    expect((await record(scheduled.body.messageId)).status).to.equal('deleted');
    // Its job ran (past its sendAt) and ended without sending: a later text arrives, it never does.
    await waitFor(
      async () =>
        (await stack().redis.hget(
          `${BULL_PREFIX}:${sendQueueName(stack().deviceId)}:${scheduled.body.messageId}`,
          'finishedOn',
        )) !== null,
      { timeoutMs: 30_000, what: 'the deleted message job ended' },
    );
    const after = await sentText(`after the deleted one ${Date.now()}`);
    await inboxEntry((m) => m.id === after.platformId);
    expect((await stack().inbox(contact)).some((m) => m.text === text)).to.equal(false);
    expect((await record(scheduled.body.messageId)).status).to.equal('deleted');
  });

  it("When an edit or a delete comes after WhatsApp's window, then 409 with a clear error and nothing is sent", async () => {
    const target = await sentText(`late ${Date.now()}`);
    const key = keys.message(stack().deviceId, target.id);
    await stack().redis.hset(key, 'sentAt', new Date(Date.now() - 16 * 60_000).toISOString());
    const edit = await send({ edit: { messageId: target.id, text: 'too late' } });
    expect(edit.status).to.equal(409);
    expect(edit.body).to.deep.equal({ success: false, error: ERRORS.editWindowPassed });
    await stack().redis.hset(key, 'sentAt', new Date(Date.now() - 61 * 60 * 60_000).toISOString());
    const del = await send({ delete: { messageId: target.id } });
    expect(del.status).to.equal(409);
    expect(del.body).to.deep.equal({ success: false, error: ERRORS.deleteWindowPassed });
    // Another text goes after them: neither the edit nor the delete ever reached the contact.
    const marker = await sentText(`marker ${Date.now()}`);
    await inboxEntry((m) => m.id === marker.platformId);
    expect((await stack().inbox(contact)).filter((m) => m.targetId === target.platformId)).to.deep.equal([]);
    expect((await record(target.id)).status).not.to.equal('deleted');
    // Bad requests: an edit with text, a list, another recipient, an unknown message.
    expect((await send({ edit: { messageId: target.id, text: 'x' }, text: 'y' })).status).to.equal(400);
    expect((await send({ to: [contact], delete: { messageId: target.id } })).status).to.equal(400);
    expect((await send({ to: '15550299999', delete: { messageId: target.id } })).status).to.equal(400);
    expect((await send({ delete: { messageId: 'nope' } })).status).to.equal(404);
  });

  it('When a text carries a URL, then a page on an allowed host arrives previewed with its title, and a refused address is never contacted', async () => {
    const withPreview = await sentText(`read this ${pageUrl} today`);
    const arrived = await inboxEntry((m) => m.id === withPreview.platformId);
    expect(arrived.text).to.equal(`read this ${pageUrl} today`);
    expect(arrived.preview).to.deep.include({
      title: 'Preview & Title',
      description: 'A page served on 127.0.0.1',
      url: pageUrl,
    });

    const refusedText = `and not this ${refusedUrl}`;
    const plain = await sentText(refusedText);
    const plainArrived = await inboxEntry((m) => m.id === plain.platformId);
    expect(plainArrived.text).to.equal(refusedText);
    expect(plainArrived.preview).to.equal(undefined);
    expect(refusedHits).to.equal(0);

    const off = await sentText(`no preview wanted ${pageUrl}?x=1`);
    const offArrived = await inboxEntry((m) => m.id === off.platformId);
    expect(offArrived.preview?.title).to.equal('Preview & Title');
    const optOut = await send({ text: `opted out ${pageUrl}?x=2`, linkPreview: false });
    expect(optOut.status).to.equal(202);
    const optOutId = (await record(optOut.body.messageId)).platformMessageId;
    expect((await inboxEntry((m) => m.id === optOutId)).preview).to.equal(undefined);
  });

  it('When a contact edits and then deletes a message it sent, then the inbound record shows the edit, then reads deleted', async () => {
    // A webhook (127.0.0.1 is allowed here): its outbox collects the events, no notifier needed.
    const hook = await stack().api('PUT', '/webhook', {
      url: `${pageUrl}/hook`,
      events: ['message.edited', 'message.deleted'],
    });
    expect(hook.status).to.equal(200);
    const text = `from the contact ${Date.now()}`;
    const sent = await stack().simApi<{ id: string }>('POST', `/contacts/${contact}/send`, {
      to: account,
      text,
    });
    let inboundId = '';
    await waitFor(
      async () => {
        const list = await stack().api<{
          data: { messages: { messageId: string; platformMessageId: string }[] };
        }>('GET', '/messages?direction=inbound');
        inboundId = list.body.data.messages.find((m) => m.platformMessageId === sent.id)?.messageId ?? '';
        return inboundId !== '';
      },
      { what: 'the inbound message recorded' },
    );
    await stack().simApi('POST', `/contacts/${contact}/revise`, {
      to: account,
      id: sent.id,
      text: 'contact edit',
    });
    await waitFor(async () => (await record(inboundId)).text === 'contact edit', {
      what: 'the inbound edit',
    });
    expect((await record(inboundId)).edits!.map((e) => e.text)).to.deep.equal(['contact edit']);
    await stack().simApi('POST', `/contacts/${contact}/revise`, { to: account, id: sent.id });
    await waitFor(async () => (await record(inboundId)).status === 'deleted', { what: 'the inbound delete' });
    const deleted = await record(inboundId);
    expect(deleted.deletedAt).to.be.a('string');
    expect(deleted.text).to.equal(undefined);
    const outbox = (await stack().redis.xrange(keys.eventOutbox(stack().deviceId), '-', '+')) as [
      string,
      string[],
    ][];
    const events = outbox.map(([, f]) => ({
      type: f[f.indexOf('type') + 1],
      data: f[f.indexOf('data') + 1]!,
    }));
    expect(events.map((e) => e.type)).to.deep.equal(['message.edited', 'message.deleted']);
    // The edit's text is sealed in the outbox; the delete names the inbound message and its contact.
    expect(events[0]!.data).not.to.include('contact edit');
    expect(JSON.parse(events[1]!.data)).to.include({
      messageId: inboundId,
      direction: 'inbound',
      from: contact,
    });
    // The simulated phone refuses an edit of a message it never sent.
    const refusedEdit = await stack()
      .simApi('POST', `/contacts/${contact}/revise`, { to: account, id: 'NOT-SENT', text: 'x' })
      .catch((err: Error) => err.message);
    expect(refusedEdit).to.match(/409/);
  });
});
