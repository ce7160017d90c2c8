import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { keys } from '@mgw/contracts';
import { useStack, waitFor } from '@mgw/testing';

interface Page<T> {
  data: T;
}
interface ChatEntry {
  id: string;
  type: string;
  subject?: string;
  unreadCount: number;
  lastMessage: { messageId: string; direction: string; text?: string };
}
interface MessageView {
  messageId: string;
  direction: string;
  text?: string;
  history?: boolean;
  status: string;
  to?: string;
  from?: string;
}
interface HistoryMessageInput {
  id: string;
  fromMe: boolean;
  text?: string;
  at: number;
  author?: string;
}

/**
 * History sync at link time, end to end: the simulator's phone sends the linked device a
 * HISTORY_SYNC_NOTIFICATION (a real Baileys client receives it), the sender fetches the blob
 * through its guarded client from the simulator's media host, reads it within its bounds and
 * records its messages in their chats — when the device's `historySync` setting is on.
 */
describe('e2e: history sync at link time — chats and messages from the phone (real client, simulator)', function () {
  this.timeout(180_000);
  const MAX_MESSAGES = 6;
  const stack = useStack({
    env: {
      // No ALLOWED_PRIVATE_HOSTS: in sandbox mode the senders may fetch media from the simulator's
      // media host (on loopback here), and from nothing else private.
      HISTORY_SYNC_MAX_MESSAGES: String(MAX_MESSAGES),
      HISTORY_SYNC_MAX_BYTES: String(64 * 1024),
    },
  });
  const account = '15551900001';
  const [ana, ben] = ['15551900011', '15551900012'];
  const group = '120363019000000001@g.us';
  const now = Math.floor(Date.now() / 1000);
  let redis: Redis;

  before(async () => {
    redis = new Redis(stack().redisUrl);
    // Set before the link: the chunks come right after it.
    const set = await stack().api('PATCH', '/settings', { historySync: true });
    expect(set.status, JSON.stringify(set.body)).to.equal(200);
    expect((set.body.data as Record<string, unknown>).historySync).to.equal(true);
    await stack().linkByQr(account);
  });
  after(async () => {
    await redis?.quit();
  });

  const chats = async (): Promise<ChatEntry[]> =>
    (await stack().api<Page<{ chats: ChatEntry[] }>>('GET', '/chats?limit=100')).body.data.chats;
  const chatMessages = async (id: string, query = 'limit=100') =>
    (
      await stack().api<Page<{ messages: MessageView[]; nextCursor?: string }>>(
        'GET',
        `/chats/${encodeURIComponent(id)}/messages?${query}`,
      )
    ).body.data;
  const sync = (body: unknown) => stack().simApi('POST', `/accounts/${account}/history-sync`, body);
  const metric = async (name: string, outcome: string): Promise<number> => {
    const text = await (await fetch(`http://127.0.0.1:${stack().senders()[0]!.metricsPort}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith(`${name}{outcome="${outcome}"}`));
    return line ? Number(line.split(' ').pop()) : 0;
  };
  const id = (n: number) => `HIST${n.toString().padStart(6, '0')}`;

  it('When the phone sends the history of a 1:1 chat (both directions) and a group, then GET /chats and their messages show it in time order, never unread, sealed at rest, outside GET /messages', async () => {
    const anaMessages: HistoryMessageInput[] = [
      { id: id(1), fromMe: false, text: 'Hello, is the shop open?', at: now - 3600 },
      { id: id(2), fromMe: true, text: 'Yes, until 6 pm', at: now - 3500 },
      { id: id(3), fromMe: false, text: 'Great, see you', at: now - 3400 },
    ];
    const groupMessages: HistoryMessageInput[] = [
      { id: id(4), fromMe: false, text: 'Team, the order shipped', at: now - 1800, author: ben },
      { id: id(5), fromMe: true, text: 'Thanks!', at: now - 1700 },
    ];
    const sent = await sync({
      conversations: [
        { with: ana, name: 'Ana', messages: anaMessages },
        { with: group, name: 'Shop team', messages: groupMessages },
      ],
    });
    expect(sent).to.include({ devices: 1 });
    let list: ChatEntry[] = [];
    await waitFor(async () => (list = await chats()).length === 2, {
      timeoutMs: 30_000,
      what: 'the history chats listed',
    });
    // Newest activity first; a history message is never unread (it was the phone's to read).
    expect(list.map((c) => [c.id, c.type, c.unreadCount])).to.deep.equal([
      [group, 'group', 0],
      [ana, 'direct', 0],
    ]);
    expect(list[0]!.subject).to.equal('Shop team');
    expect(list[0]!.lastMessage).to.include({ direction: 'outbound', text: 'Thanks!' });
    expect(list[1]!.lastMessage).to.include({ direction: 'inbound', text: 'Great, see you' });

    const page = await chatMessages(ana);
    expect(page.messages.map((m) => [m.direction, m.text, m.history])).to.deep.equal([
      ['inbound', 'Great, see you', true],
      ['outbound', 'Yes, until 6 pm', true],
      ['inbound', 'Hello, is the shop open?', true],
    ]);
    const own = page.messages[1]!;
    const one = await stack().api<Page<MessageView>>('GET', `/messages/${own.messageId}`);
    expect(one.status).to.equal(200);
    expect(one.body.data).to.include({
      direction: 'outbound',
      status: 'sent',
      to: ana,
      text: 'Yes, until 6 pm',
      history: true,
    });
    const groupPage = await chatMessages(group);
    expect(groupPage.messages.map((m) => [m.direction, m.text])).to.deep.equal([
      ['outbound', 'Thanks!'],
      ['inbound', 'Team, the order shipped'],
    ]);
    expect(groupPage.messages[1]!.from).to.equal(ben);

    // What happened before the link is not in the device's message list, and emitted no event.
    const listed = await stack().api<Page<{ messages: MessageView[] }>>('GET', '/messages?limit=100');
    expect(listed.body.data.messages.filter((m) => m.history)).to.have.length(0);
    const events = await stack().api<Page<{ events: { type: string }[] }>>('GET', '/events?limit=100');
    expect(events.body.data.events.map((e) => e.type)).to.not.include('message.received');

    // Sealed at rest, and bounded in time: the record and the device's history count expire.
    const raw = await redis.hgetall(keys.message(stack().deviceId, own.messageId));
    expect(raw.history).to.equal('1');
    expect(JSON.stringify(raw)).to.not.include('until 6 pm');
    expect(await redis.ttl(keys.message(stack().deviceId, own.messageId))).to.be.greaterThan(0);
    expect(await redis.ttl(keys.historyCount(stack().deviceId))).to.be.greaterThan(0);
    expect(await redis.get(keys.historyCount(stack().deviceId))).to.equal('5');
  });

  it('When a contact writes after the link, then the live message is above the history in its chat and unread, and the pages cover every message once', async () => {
    await stack().simApi('POST', `/contacts/${ana}/send`, { to: account, text: 'Are you there?' });
    await waitFor(async () => (await chats()).find((c) => c.id === ana)?.unreadCount === 1, {
      timeoutMs: 20_000,
      what: 'the live message unread in its chat',
    });
    const first = await chatMessages(ana, 'limit=2');
    expect(first.messages.map((m) => [m.text, m.history ?? false])).to.deep.equal([
      ['Are you there?', false],
      ['Great, see you', true],
    ]);
    // The cursor of a history message is its place by time (a fraction): it pages on.
    const rest = await chatMessages(ana, `limit=10&cursor=${first.nextCursor}`);
    expect(rest.messages.map((m) => m.text)).to.deep.equal(['Yes, until 6 pm', 'Hello, is the shop open?']);
    expect(rest.nextCursor).to.equal(undefined);
  });

  it('When a chunk repeats messages and comes past the device bound (HISTORY_SYNC_MAX_MESSAGES), then nothing is recorded twice and the newest are kept within the bound', async () => {
    const seenBefore = await metric('mgw_history_sync_messages_total', 'seen');
    const refusedBefore = await metric('mgw_history_sync_messages_total', 'refused');
    const cai = '15551900013';
    // One message of the first chunk again, and three new ones: the device bound (6) leaves room for one.
    const caiMessages = [1, 2, 3].map((n) => ({
      id: id(100 + n),
      fromMe: false,
      text: `Cai ${n}`,
      at: now - 600 + n,
    }));
    await sync({
      syncType: 'RECENT',
      conversations: [
        {
          with: ana,
          messages: [{ id: id(1), fromMe: false, text: 'Hello, is the shop open?', at: now - 3600 }],
        },
        { with: cai, messages: caiMessages },
      ],
    });
    await waitFor(async () => (await metric('mgw_history_sync_messages_total', 'seen')) === seenBefore + 1, {
      timeoutMs: 20_000,
      what: 'the repeated message seen',
    });
    expect(await metric('mgw_history_sync_messages_total', 'refused')).to.equal(refusedBefore + 2);
    // Newest first within the bound: the one room left takes Cai 3.
    const caiPage = await chatMessages(cai);
    expect(caiPage.messages.map((m) => m.text)).to.deep.equal(['Cai 3']);
    expect(await redis.get(keys.historyCount(stack().deviceId))).to.equal(String(MAX_MESSAGES));
    const anaPage = await chatMessages(ana);
    expect(anaPage.messages.filter((m) => m.text === 'Hello, is the shop open?')).to.have.length(1);
  });

  it('When the history holds a contact\u2019s photo and a document the account sent, then both are described in their chat and download with GET /messages/:id/media', async () => {
    // A new day's count: the earlier chunks used the device bound.
    await redis.del(keys.historyCount(stack().deviceId));
    const dan = '15551900016';
    const photo = randomBytes(2048);
    const invoice = Buffer.from('%PDF-1.4 invoice 42 from the history');
    await sync({
      syncType: 'RECENT',
      conversations: [
        {
          with: dan,
          messages: [
            {
              id: id(400),
              fromMe: false,
              text: 'the damaged box',
              attachment: { type: 'image', base64: photo.toString('base64'), mimeType: 'image/jpeg' },
              at: now - 200,
            },
            {
              id: id(401),
              fromMe: true,
              attachment: {
                type: 'document',
                base64: invoice.toString('base64'),
                mimeType: 'application/pdf',
                fileName: 'invoice-42.pdf',
              },
              at: now - 100,
            },
          ],
        },
      ],
    });
    let page: { messages: (MessageView & { attachment?: Record<string, unknown> })[] } = { messages: [] };
    await waitFor(
      async () =>
        (await chats()).some((c) => c.id === dan) && (page = await chatMessages(dan)).messages.length === 2,
      {
        timeoutMs: 20_000,
        what: 'the two history messages with attachments recorded',
      },
    );
    const [doc, image] = page.messages;
    expect(doc).to.deep.include({ direction: 'outbound', history: true });
    expect(doc!.attachment).to.include({
      type: 'document',
      mimeType: 'application/pdf',
      fileName: 'invoice-42.pdf',
    });
    expect(image).to.deep.include({ direction: 'inbound', history: true, text: 'the damaged box' });
    expect(image!.attachment).to.include({ type: 'image', mimeType: 'image/jpeg', size: photo.length });

    // Downloaded on demand by the device's holder, from the media host, as a live attachment is.
    for (const [m, bytes, type] of [
      [image!, photo, 'image/jpeg'],
      [doc!, invoice, 'application/pdf'],
    ] as const) {
      const res = await fetch(`${stack().apiUrl}/api/messenger/v1/messages/${m.messageId}/media`, {
        headers: { authorization: `Bearer ${stack().token}` },
      });
      expect(res.status, m.messageId).to.equal(200);
      expect(res.headers.get('content-type')).to.equal(type);
      expect(Buffer.from(await res.arrayBuffer()).equals(bytes), m.messageId).to.equal(true);
    }
    // The media reference is sealed at rest like a live one's.
    const raw = await redis.hget(keys.message(stack().deviceId, image!.messageId), 'media');
    expect(raw).to.match(/^enc1:/);
  });

  it('When the phone sends a chunk inline (initialHistBootstrapInlinePayload: no media key, nothing to download), then its messages are recorded in their chat as a downloaded chunk\u2019s are', async () => {
    await redis.del(keys.historyCount(stack().deviceId));
    const carla = '15551900021';
    const read = await metric('mgw_history_sync_chunks_total', 'read');
    const sent = await stack().simApi<{ form: string }>('POST', `/accounts/${account}/history-sync`, {
      form: 'inline',
      syncType: 'RECENT',
      conversations: [
        {
          with: carla,
          messages: [
            { id: id(500), fromMe: false, text: 'inline hello', at: now - 120 },
            { id: id(501), fromMe: true, text: 'inline reply', at: now - 110 },
          ],
        },
      ],
    });
    expect(sent.form).to.equal('inline');
    await waitFor(async () => (await metric('mgw_history_sync_chunks_total', 'read')) === read + 1, {
      timeoutMs: 20_000,
      what: 'the inline chunk read',
    });
    const page = await chatMessages(carla);
    expect(page.messages.map((m) => [m.direction, m.text, m.history])).to.deep.equal([
      ['outbound', 'inline reply', true],
      ['inbound', 'inline hello', true],
    ]);
  });

  it('When a chunk is over HISTORY_SYNC_MAX_BYTES or the device keeps no history, then it is counted and nothing is recorded, and the device stays connected', async () => {
    await redis.del(keys.historyCount(stack().deviceId));
    const big = Array.from({ length: 24 }, (_, n) => ({
      id: id(200 + n),
      fromMe: false,
      // Random text does not deflate: 24 × 4,000 characters is past 64 KiB.
      text: randomBytes(3000).toString('base64'),
      at: now - 300 + n,
    }));
    const tooLarge = await metric('mgw_history_sync_chunks_total', 'too_large');
    await sync({ syncType: 'RECENT', conversations: [{ with: '15551900014', messages: big }] });
    await waitFor(async () => (await metric('mgw_history_sync_chunks_total', 'too_large')) === tooLarge + 1, {
      timeoutMs: 20_000,
      what: 'the chunk counted too large',
    });

    const off = await stack().api('PATCH', '/settings', { historySync: false });
    expect((off.body.data as Record<string, unknown>).historySync).to.equal(false);
    const declined = await metric('mgw_history_sync_chunks_total', 'declined');
    await sync({
      syncType: 'RECENT',
      conversations: [
        { with: '15551900015', messages: [{ id: id(300), fromMe: false, text: 'hi', at: now - 60 }] },
      ],
    });
    await waitFor(async () => (await metric('mgw_history_sync_chunks_total', 'declined')) === declined + 1, {
      timeoutMs: 20_000,
      what: 'the chunk declined',
    });
    const ids = (await chats()).map((c) => c.id);
    expect(ids).to.not.include('15551900014');
    expect(ids).to.not.include('15551900015');
    expect((await stack().api('GET', '/status')).body.status).to.equal('connected');
  });
});

/**
 * A sandbox that publishes no media host (`mediaUrl` absent from its /info: an older or another
 * simulator): sandbox mode never reaches WhatsApp, so a chunk to download fails, saying why; an
 * inline chunk needs no media host and is read.
 */
describe('e2e: a sandbox without a media host — no download reaches WhatsApp (real client, simulator)', function () {
  this.timeout(180_000);
  const stack = useStack({ sim: { publishMediaUrl: false } });
  const account = '15551900101';
  const now = Math.floor(Date.now() / 1000);

  before(async () => {
    const set = await stack().api('PATCH', '/settings', { historySync: true });
    expect(set.status, JSON.stringify(set.body)).to.equal(200);
    await stack().linkByQr(account);
  });

  it('When a history chunk is to be downloaded, then it fails with the sandbox\u2019s reason and nothing is fetched from WhatsApp\u2019s CDN; an inline chunk is still read', async () => {
    const sender = () => stack().processes.find((p) => p.name.startsWith('sender'))!;
    const sync = (form: string, id: string, text: string) =>
      stack().simApi('POST', `/accounts/${account}/history-sync`, {
        form,
        syncType: 'RECENT',
        conversations: [{ with: '15551900111', messages: [{ id, fromMe: false, text, at: now - 60 }] }],
      });
    await sync('download', 'NOHOST1', 'never fetched');
    await waitFor(async () => sender().output.some((l) => l.includes('history sync chunk not kept')), {
      timeoutMs: 20_000,
      what: 'the chunk refused',
    });
    const refused = sender().output.filter((l) => l.includes('history sync chunk not kept'));
    expect(refused).to.have.length(1);
    expect(refused[0]).to.include('SandboxMediaError').and.include('no mediaUrl in its /info');
    expect(sender().output.filter((l) => l.includes('mmg.whatsapp.net'))).to.deep.equal([]);

    await sync('inline', 'NOHOST2', 'read inline');
    await waitFor(
      async () =>
        (
          await stack().api<Page<{ messages: MessageView[] }>>('GET', '/chats/15551900111/messages?limit=10')
        ).body.data?.messages?.some((m) => m.text === 'read inline') ?? false,
      { timeoutMs: 20_000, what: 'the inline chunk recorded' },
    );
  });
});
