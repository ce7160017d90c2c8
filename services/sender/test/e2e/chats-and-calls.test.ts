import { expect } from 'chai';
import { useSharedStack, waitFor } from '@mgw/testing';

interface Page<T> {
  data: T;
}
interface ChatEntry {
  id: string;
  type: string;
  contact?: { phone?: string; lid?: string };
  subject?: string;
  unreadCount: number;
  lastActivityAt: string;
  lastMessage: Record<string, unknown>;
}
interface LoggedEvent {
  type: string;
  data: Record<string, unknown>;
}
interface SimCall {
  id: string;
  state: string;
  rejectedAfterMs?: number;
}
interface SimReadReceipt {
  from: string;
  id: string;
  type: string;
  shown: boolean;
}

describe('e2e: chats, read receipts and calls (real client, simulator)', function () {
  this.timeout(180_000);
  const stack = useSharedStack();
  const account = '15551700001';
  const [ana, ben, cai, dan] = ['15551700011', '15551700012', '15551700013', '15551700014'];
  /** Our message ids of what each contact wrote, oldest first. */
  const wrote = new Map<string, string[]>();

  before(async () => {
    await stack().linkByQr(account);
  });

  /** A contact writes; resolves with our message id once the gateway recorded it. */
  const contactWrites = async (from: string, text: string): Promise<string> => {
    const sent = await stack().simApi<{ id: string }>('POST', `/contacts/${from}/send`, {
      to: account,
      text,
    });
    let messageId = '';
    await waitFor(
      async () => {
        const page = await stack().api<
          Page<{ messages: { messageId: string; platformMessageId: string }[] }>
        >('GET', '/messages?direction=inbound&limit=20');
        messageId = page.body.data.messages.find((m) => m.platformMessageId === sent.id)?.messageId ?? '';
        return messageId !== '';
      },
      { timeoutMs: 20_000, what: `the message of ${from} recorded` },
    );
    wrote.set(from, [...(wrote.get(from) ?? []), messageId]);
    return messageId;
  };
  const events = async (types: string): Promise<LoggedEvent[]> =>
    (await stack().api<Page<{ events: LoggedEvent[] }>>('GET', `/events?types=${types}&limit=100`)).body.data
      .events;
  const chat = async (id: string): Promise<ChatEntry | undefined> =>
    (await stack().api<Page<{ chats: ChatEntry[] }>>('GET', '/chats?limit=100')).body.data.chats.find(
      (c) => c.id === id,
    );
  const receiptsOf = async (phone: string) =>
    (await stack().simApi<{ receipts: SimReadReceipt[] }>('GET', `/contacts/${phone}/read-receipts`))
      .receipts;

  it('When contacts write and the account answers, then GET /chats lists each chat newest first with its unread count, and its messages page in both directions', async () => {
    await contactWrites(ana, 'Hi, is my order ready?');
    await contactWrites(ben, 'Hello');
    await contactWrites(ana, 'Order 42');
    const send = await stack().api<{ messageId: string }>('POST', '/send', {
      to: ana,
      text: 'Yes, it ships today',
    });
    expect(send.status, JSON.stringify(send.body)).to.equal(202);
    await waitFor(async () => (await chat(ana))?.lastMessage.messageId === send.body.messageId, {
      timeoutMs: 30_000,
      what: 'the sent answer becomes the chat’s last message',
    });

    const list = await stack().api<Page<{ chats: ChatEntry[]; nextCursor?: string }>>(
      'GET',
      '/chats?limit=1',
    );
    expect(list.status, JSON.stringify(list.body)).to.equal(200);
    expect(list.body.data.chats).to.have.length(1);
    const first = list.body.data.chats[0]!;
    expect(first).to.deep.include({ id: ana, type: 'direct', unreadCount: 2 });
    expect(first.contact!.phone).to.equal(ana);
    expect(first.lastMessage).to.include({
      messageId: send.body.messageId,
      direction: 'outbound',
      text: 'Yes, it ships today',
    });
    const next = await stack().api<Page<{ chats: ChatEntry[] }>>(
      'GET',
      `/chats?limit=1&cursor=${encodeURIComponent(list.body.data.nextCursor!)}`,
    );
    expect(next.body.data.chats.map((c) => [c.id, c.unreadCount])).to.deep.equal([[ben, 1]]);

    const page1 = await stack().api<Page<{ messages: Record<string, unknown>[]; nextCursor?: string }>>(
      'GET',
      `/chats/${ana}/messages?limit=2`,
    );
    expect(page1.status).to.equal(200);
    expect(page1.body.data.messages.map((m) => [m.direction, m.text])).to.deep.equal([
      ['outbound', 'Yes, it ships today'],
      ['inbound', 'Order 42'],
    ]);
    const page2 = await stack().api<Page<{ messages: Record<string, unknown>[]; nextCursor?: string }>>(
      'GET',
      `/chats/${ana}/messages?limit=2&cursor=${page1.body.data.nextCursor}`,
    );
    expect(page2.body.data.messages.map((m) => m.text)).to.deep.equal(['Hi, is my order ready?']);
    expect(page2.body.data.nextCursor).to.equal(undefined);

    const unknown = await stack().api('GET', '/chats/15559999999/messages');
    expect(unknown.status).to.equal(404);
    expect(unknown.body).to.deep.equal({ success: false, error: 'Chat not found' });
    const bad = await stack().api<{ details: { path: string[] }[] }>('GET', '/chats/not-a-chat/messages');
    expect(bad.status).to.equal(400);
    expect(bad.body.details[0]!.path).to.deep.equal(['chatId']);
  });

  it('When a chat is marked read, then the contact sees read receipts for its unread messages and the unread count is 0', async () => {
    const read = await stack().api<Page<Record<string, unknown>>>('POST', `/chats/${ana}/read`);
    expect(read.status, JSON.stringify(read.body)).to.equal(200);
    expect(read.body.data).to.deep.equal({ chatId: ana, marked: 2, receiptsShown: true, unreadCount: 0 });
    let receipts: SimReadReceipt[] = [];
    await waitFor(async () => (receipts = await receiptsOf(ana)).length === 2, {
      timeoutMs: 10_000,
      what: 'the contact sees two read receipts',
    });
    expect(receipts.map((r) => [r.from, r.type, r.shown])).to.deep.equal([
      [account, 'read', true],
      [account, 'read', true],
    ]);
    expect((await chat(ana))!.unreadCount).to.equal(0);
    // Again: nothing unread, nothing sent.
    const again = await stack().api<Page<Record<string, unknown>>>('POST', `/chats/${ana}/read`);
    expect(again.body.data).to.include({ marked: 0, unreadCount: 0 });
  });

  it('When autoMarkRead is on, then a new message is read as it arrives (the contact sees it) and never counts unread', async () => {
    const bad = await stack().api<{ details: { path: string[] }[] }>('PATCH', '/settings', {
      autoMarkRead: 'yes',
    });
    expect(bad.status).to.equal(400);
    expect(bad.body.details[0]!.path).to.deep.equal(['autoMarkRead']);
    const set = await stack().api<Page<Record<string, unknown>>>('PATCH', '/settings', {
      autoMarkRead: true,
    });
    expect(set.status, JSON.stringify(set.body)).to.equal(200);
    expect(set.body.data).to.deep.equal({
      rejectCalls: false,
      rejectCallMessage: null,
      autoMarkRead: true,
      historySync: false,
    });
    await contactWrites(cai, 'read me at once');
    await waitFor(async () => (await receiptsOf(cai)).some((r) => r.type === 'read' && r.shown), {
      timeoutMs: 10_000,
      what: 'the automatic read receipt at the contact',
    });
    await waitFor(async () => (await chat(cai))?.unreadCount === 0, { timeoutMs: 5000, what: 'unread 0' });
    await stack().api('PATCH', '/settings', { autoMarkRead: false });
  });

  it('When the account’s read-receipts privacy is off, then a message marked read tells only the account’s devices: the contact sees no receipt, the unread count still drops', async () => {
    await stack().simApi('PUT', `/accounts/${account}/privacy`, { readreceipts: 'none' });
    try {
      const first = await contactWrites(dan, 'one');
      const second = await contactWrites(dan, 'two');
      expect((await chat(dan))!.unreadCount).to.equal(2);
      const read = await stack().api<Page<Record<string, unknown>>>('POST', `/messages/${second}/read`);
      expect(read.status, JSON.stringify(read.body)).to.equal(200);
      // Reading the second reads the first before it too.
      expect(read.body.data).to.deep.equal({
        messageId: second,
        chatId: dan,
        marked: 2,
        receiptsShown: false,
        unreadCount: 0,
      });
      let receipts: SimReadReceipt[] = [];
      await waitFor(async () => (receipts = await receiptsOf(dan)).length === 2, {
        timeoutMs: 10_000,
        what: 'the read-self receipts at the server',
      });
      expect(receipts.every((r) => r.type === 'read-self' && !r.shown)).to.equal(true);
      expect(first).to.be.a('string');
      // An outbound message cannot be read; another device's message is not seen.
      const own = (await chat(ana))!.lastMessage.messageId as string;
      const notInbound = await stack().api('POST', `/messages/${own}/read`);
      expect(notInbound.status).to.equal(404);
      const other = await stack().createToken('another-device');
      for (const [method, path] of [
        ['POST', `/messages/${second}/read`],
        ['GET', `/chats/${dan}/messages`],
        ['POST', `/chats/${dan}/read`],
      ] as const) {
        const res = await stack().api(method, path, undefined, other);
        expect(res.status, `${method} ${path}`).to.equal(404);
      }
      const none = await stack().api<Page<{ chats: unknown[] }>>('GET', '/chats', undefined, other);
      expect(none.body.data.chats).to.deep.equal([]);
    } finally {
      await stack().simApi('PUT', `/accounts/${account}/privacy`, { readreceipts: 'all' });
    }
  });

  it('When rejectCalls is on and a contact calls, then the call is rejected within 1 s of the offer, the caller gets the text through the queue, and call.received / call.missed are logged', async () => {
    const text = 'Sorry, this number cannot take calls: please write instead.';
    const set = await stack().api<Page<Record<string, unknown>>>('PATCH', '/settings', {
      rejectCalls: true,
      rejectCallMessage: text,
    });
    expect(set.body.data).to.include({ rejectCalls: true, rejectCallMessage: text });
    const caller = '15551700021';
    const call = await stack().simApi<SimCall>('POST', '/calls', { from: caller, to: account, video: true });
    let seen: SimCall = call;
    await waitFor(
      async () => (seen = await stack().simApi<SimCall>('GET', `/calls/${call.id}`)).state === 'rejected',
      {
        timeoutMs: 10_000,
        what: 'the call rejected',
      },
    );
    console.log(`      call rejected automatically ${seen.rejectedAfterMs} ms after the offer`);
    // The goal is under 1 s (docs/chats-and-calls.md): quiet: 14 ms.
    expect(seen.rejectedAfterMs).to.be.below(1000);

    let logged: LoggedEvent[] = [];
    await waitFor(async () => (logged = await events('call.received,call.missed')).length >= 2, {
      timeoutMs: 10_000,
      what: 'the call events',
    });
    const received = logged.find((e) => e.type === 'call.received')!.data;
    expect(received).to.deep.include({
      callId: call.id,
      from: caller,
      video: true,
      group: false,
      rejecting: true,
    });
    const missed = logged.find((e) => e.type === 'call.missed')!.data;
    expect(missed).to.include({ callId: call.id, reason: 'rejected', video: true });
    const replyId = missed.replyMessageId as string;
    expect(replyId).to.be.a('string');
    await waitFor(async () => (await stack().inbox(caller)).some((m) => m.text === text), {
      timeoutMs: 30_000,
      what: 'the answer at the caller',
    });
    const reply = await stack().api<Page<Record<string, unknown>>>('GET', `/messages/${replyId}`);
    expect(reply.body.data).to.include({ to: caller, status: 'sent' });
    await stack().api('PATCH', '/settings', { rejectCalls: false, rejectCallMessage: null });
  });

  it('When calls are not rejected, then a call the caller cancels is missed, one answered on the phone ends, one nobody answers times out, and a group call says so', async () => {
    const caller = '15551700022';
    const cancelled = await stack().simApi<SimCall>('POST', '/calls', { from: caller, to: account });
    const answered = await stack().simApi<SimCall>('POST', '/calls', { from: caller, to: account });
    const unanswered = await stack().simApi<SimCall>('POST', '/calls', {
      from: caller,
      to: account,
      groupId: '120363000000001234@g.us',
    });
    // Let the offers reach the device before they end.
    await waitFor(
      async () => (await events('call.received')).filter((e) => e.data.callId === unanswered.id).length === 1,
      {
        timeoutMs: 10_000,
        what: 'the offers',
      },
    );
    await stack().simApi('POST', `/calls/${cancelled.id}/terminate`, {});
    await stack().simApi('POST', `/calls/${answered.id}/accept`, {});
    await stack().simApi('POST', `/calls/${answered.id}/terminate`, {});
    await stack().simApi('POST', `/calls/${unanswered.id}/terminate`, { reason: 'timeout' });
    const ids = new Set([cancelled.id, answered.id, unanswered.id]);
    let ends: LoggedEvent[] = [];
    await waitFor(
      async () =>
        (ends = (await events('call.missed,call.ended')).filter((e) => ids.has(e.data.callId as string)))
          .length === 3,
      { timeoutMs: 10_000, what: 'three call ends' },
    );
    const byId = new Map(ends.map((e) => [e.data.callId, e]));
    expect(byId.get(cancelled.id)).to.deep.include({ type: 'call.missed' });
    expect(byId.get(cancelled.id)!.data).to.include({ reason: 'cancelled', from: caller });
    expect(byId.get(answered.id)!.type).to.equal('call.ended');
    expect(byId.get(answered.id)!.data.answeredAt).to.be.a('string');
    expect(byId.get(unanswered.id)!.data).to.include({
      reason: 'timeout',
      group: true,
      groupId: '120363000000001234@g.us',
    });
    const offer = (await events('call.received')).find((e) => e.data.callId === cancelled.id)!;
    expect(offer.data).to.include({ rejecting: false, video: false });
    expect((await stack().simApi<SimCall>('GET', `/calls/${cancelled.id}`)).state).to.equal('missed');
  });
});
