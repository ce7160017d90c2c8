import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import { CHAT_LIMITS, keys, newMessageId, newPlatformMessageId, type SendJobData } from '@mgw/contracts';
import {
  ChatIndex,
  ContentStore,
  Encryption,
  InboundStore,
  MessageStore,
  readAccountSettings,
  writeAccountSettings,
} from '../src/index.js';

const RETENTION = 600;

describe('store: the chat index — chats from recorded messages, unread counts, pages (real Redis)', () => {
  let redis: Redis;
  let inbound: InboundStore;
  let messages: MessageStore;
  let chats: ChatIndex;
  const encryption = Encryption.fromEnv();
  before(() => {
    redis = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: null });
    inbound = new InboundStore(redis, encryption, RETENTION);
    messages = new MessageStore(redis, RETENTION);
    chats = new ChatIndex(redis, encryption);
  });
  after(async () => {
    await redis.quit();
  });

  const newDevice = () => `chat-${Math.random().toString(36).slice(2, 8)}`;
  const receive = (
    deviceId: string,
    from: string,
    text: string,
    at: Date,
    group?: { id: string; subject: string },
  ) =>
    inbound.record(deviceId, {
      platformMessageId: newPlatformMessageId(),
      from,
      contact: { phone: from },
      text,
      receivedAt: at,
      ...(group ? { chat: { type: 'group' as const, ...group } } : {}),
      waKey: group
        ? { remoteJid: group.id, participant: `${from}@s.whatsapp.net` }
        : { remoteJid: `${from}@s.whatsapp.net` },
    });
  const sendTo = async (deviceId: string, to: string): Promise<string> => {
    const job: SendJobData = {
      kind: 'send',
      messageId: newMessageId(),
      platformMessageId: newPlatformMessageId(),
      deviceId,
      to,
      contentId: newMessageId(),
      linkGeneration: 0,
      enqueuedAt: Date.now(),
    };
    await messages.claim(job);
    expect(await messages.markSent(job, new Date())).to.equal(true);
    return job.messageId;
  };

  it('When contacts write, a group member writes and the account sends, then GET /chats reads each chat once, newest first, with unread counts', async () => {
    const deviceId = newDevice();
    const t0 = Date.now() - 60_000;
    const a1 = await receive(deviceId, '15550000001', 'hi', new Date(t0));
    await receive(deviceId, '15550000002', 'hello', new Date(t0 + 1000));
    const a2 = await receive(deviceId, '15550000001', 'again', new Date(t0 + 2000));
    const g1 = await receive(deviceId, '15550000003', 'team', new Date(t0 + 3000), {
      id: '120363000000000001@g.us',
      subject: 'Team Alpha',
    });
    const out = await sendTo(deviceId, '15550000002');
    // A redelivery is recorded once: no second entry, no second unread.
    expect(a1 && a2 && g1).to.be.a('string');

    const page = await chats.list(deviceId, 10);
    expect(page.more).to.equal(false);
    expect(page.chats.map((c) => [c.id, c.type, c.unreadCount, c.lastDirection])).to.deep.equal([
      ['15550000002', 'direct', 1, 'outbound'],
      ['120363000000000001@g.us', 'group', 1, 'inbound'],
      ['15550000001', 'direct', 2, 'inbound'],
    ]);
    expect(page.chats[0]!.lastMessageId).to.equal(out);
    expect(page.chats[1]!.subject).to.equal('Team Alpha');
    expect(page.chats[2]!.lastMessageId).to.equal(a2);
    // The subject is sealed at rest.
    const raw = await redis.hget(keys.chat(deviceId, '120363000000000001@g.us'), 'subject');
    expect(raw).to.be.a('string').and.not.include('Team');

    expect(await chats.messagesPage(deviceId, '15550000009', 1)).to.equal(undefined);
    const first = (await chats.messagesPage(deviceId, '15550000001', 1))!;
    expect(first.entries.map((e) => e.messageId)).to.deep.equal([a2]);
    expect(first.entries[0]!.fields).to.include({ messageId: a2, direction: 'inbound' });
    expect(first.more).to.equal(true);
    const older = (await chats.messagesPage(deviceId, '15550000001', 1, first.entries[0]!.seq))!;
    expect(older.entries.map((e) => e.messageId)).to.deep.equal([a1]);
    expect(older.more).to.equal(false);
    // A sent message's page entry carries its content's fields (read in the same round trip).
    const sent = (await chats.messagesPage(deviceId, '15550000002', 5))!;
    expect(sent.entries[0]).to.include({ messageId: out });
    expect(sent.entries[0]!.content).to.have.length(3);
  });

  it('When a contact answers within the second of our message (WhatsApp stamps in whole seconds), then the answer is the chat\u2019s last message; one from an earlier second is not', async () => {
    const deviceId = newDevice();
    const out = await sendTo(deviceId, '15550000004');
    // Stamped at the start of its second: before our message's ms, recorded after it.
    const reply = await receive(
      deviceId,
      '15550000004',
      'thanks',
      new Date(Math.floor(Date.now() / 1000) * 1000),
    );
    let [chat] = (await chats.list(deviceId, 5)).chats;
    expect([chat!.lastMessageId, chat!.lastDirection, chat!.unreadCount]).to.deep.equal([
      reply,
      'inbound',
      1,
    ]);
    // A message delivered late, stamped seconds earlier, is in the chat but not its last.
    const late = await receive(
      deviceId,
      '15550000004',
      'sent while you were away',
      new Date(Date.now() - 5000),
    );
    [chat] = (await chats.list(deviceId, 5)).chats;
    expect(chat!.lastMessageId).to.equal(reply);
    const page = (await chats.messagesPage(deviceId, '15550000004', 5))!;
    expect(page.entries.map((e) => e.messageId)).to.deep.equal([late, reply, out]);
  });

  it('When a page is read, then one script answers each chat with the content fields its last sent text is read from (personalised per message), and skips a chat whose hash expired', async () => {
    const deviceId = newDevice();
    const contents = new ContentStore(redis, encryption, RETENTION);
    const job: SendJobData = {
      kind: 'send',
      messageId: newMessageId(),
      platformMessageId: newPlatformMessageId(),
      deviceId,
      to: '15550000021',
      contentId: newMessageId(),
      linkGeneration: 0,
      enqueuedAt: Date.now(),
    };
    const multi = redis.multi();
    contents.stage(multi, deviceId, job.contentId, { text: 'Hi {{name}}', personalised: true }, 1);
    contents.stageVars(multi, deviceId, job.contentId, [{ messageId: job.messageId, vars: { name: 'Ana' } }]);
    await multi.exec();
    await receive(deviceId, '15550000022', 'hello', new Date(Date.now() - 5000));
    await receive(deviceId, '15550000023', 'gone soon', new Date(Date.now() - 4000));
    await messages.claim(job);
    await messages.markSent(job, new Date());
    // Its hash expired before the index entry went (the index outlives one chat's keys).
    await redis.del(keys.chat(deviceId, '15550000023'));

    const page = await chats.list(deviceId, 10);
    expect(page.chats.map((c) => c.id)).to.deep.equal(['15550000021', '15550000022']);
    const [sent, received] = page.chats;
    expect(sent!.lastContent, 'read with the page').to.have.length(3);
    expect(contents.shownFrom(deviceId, job.contentId, job.messageId, sent!.lastContent!)).to.deep.equal({
      text: 'Hi Ana',
    });
    expect(await contents.shown(deviceId, job.contentId, job.messageId)).to.deep.equal({ text: 'Hi Ana' });
    // What a contact wrote is kept on the chat: no content is read for it.
    expect(received!.lastContent).to.equal(undefined);
    expect(received!.lastPreview).to.equal('hello');
  });

  it('When chats are read up to a message or whole, then only those leave the unread set', async () => {
    const deviceId = newDevice();
    const t0 = Date.now();
    const m1 = (await receive(deviceId, '15550000011', 'one', new Date(t0)))!;
    const m2 = (await receive(deviceId, '15550000011', 'two', new Date(t0 + 1)))!;
    const m3 = (await receive(deviceId, '15550000011', 'three', new Date(t0 + 2)))!;
    expect(await chats.unread(deviceId, '15550000011', m2)).to.deep.equal([m1, m2]);
    expect(await chats.markRead(deviceId, '15550000011', [m1, m2])).to.deep.equal({ marked: 2, unread: 1 });
    expect(await chats.markRead(deviceId, '15550000011', [m1])).to.deep.equal({ marked: 0, unread: 1 });
    expect(await chats.unread(deviceId, '15550000011')).to.deep.equal([m3]);
    expect((await chats.get(deviceId, '15550000011'))!.unreadCount).to.equal(1);
    const target = await inbound.readTarget(deviceId, m3);
    expect(target!.chatId).to.equal('15550000011');
    expect(target!.key.remoteJid).to.equal('15550000011@s.whatsapp.net');
  });

  it('When messages are read or forgotten, then the page shows the count the unread set has; a chat without the kept count is counted', async () => {
    const deviceId = newDevice();
    const t0 = Date.now();
    const ids = [];
    for (let i = 0; i < 4; i++)
      ids.push((await receive(deviceId, '15550000031', `m${i}`, new Date(t0 + i)))!);
    await receive(deviceId, '15550000032', 'other', new Date(t0 + 10));
    const counts = async () =>
      Object.fromEntries((await chats.list(deviceId, 10)).chats.map((c) => [c.id, c.unreadCount]));
    expect(await counts()).to.deep.equal({ '15550000031': 4, '15550000032': 1 });
    expect(await redis.hget(keys.chat(deviceId, '15550000031'), 'unread')).to.equal('4');

    await chats.markRead(deviceId, '15550000031', [ids[0]!]);
    await chats.forget(deviceId, '15550000031', [ids[1]!]);
    expect(await counts()).to.deep.equal({ '15550000031': 2, '15550000032': 1 });
    expect(await redis.zscore(`${keys.chat(deviceId, '15550000031')}:msgs`, ids[1]!)).to.equal(null);
    expect(
      await redis.zscore(`${keys.chat(deviceId, '15550000031')}:msgs`, ids[0]!),
      'read, not forgotten',
    ).to.not.equal(null);

    // A chat recorded before the count was kept on it: its set is counted.
    await redis.hdel(keys.chat(deviceId, '15550000032'), 'unread');
    expect(await counts()).to.deep.equal({ '15550000031': 2, '15550000032': 1 });

    // A chat whose hash expired is not brought back (without a TTL) by reading its messages.
    await redis.del(keys.chat(deviceId, '15550000031'));
    expect(await chats.markRead(deviceId, '15550000031', [ids[2]!])).to.deep.equal({ marked: 1, unread: 1 });
    expect(await redis.exists(keys.chat(deviceId, '15550000031'))).to.equal(0);
  });

  it('When many chats share one activity time, then the pages cover each chat exactly once', async () => {
    const deviceId = newDevice();
    const at = new Date();
    const phones = Array.from({ length: 23 }, (_, i) => `1555001${String(i).padStart(4, '0')}`);
    for (const p of phones) await receive(deviceId, p, 'x', at);
    const seen: string[] = [];
    let cursor: { score: number; chatId: string } | undefined;
    for (let pages = 0; pages < 10; pages++) {
      const page = await chats.list(deviceId, 5, cursor);
      seen.push(...page.chats.map((c) => c.id));
      if (!page.more) break;
      const last = page.chats[page.chats.length - 1]!;
      cursor = { score: last.score, chatId: last.id };
    }
    expect(seen).to.have.length(phones.length);
    expect(new Set(seen).size).to.equal(phones.length);
  });

  it('When a chat is recorded, then every key it writes has a TTL of the message retention', async () => {
    const deviceId = newDevice();
    await receive(deviceId, '15550000021', 'ttl', new Date());
    const chat = keys.chat(deviceId, '15550000021');
    for (const key of [keys.chatIndex(deviceId), chat, `${chat}:msgs`, `${chat}:unread`]) {
      const ttl = await redis.ttl(key);
      expect(ttl, key).to.be.within(RETENTION - 5, RETENTION);
    }
  });

  it('When the chat include is read, then its bounds are CHAT_LIMITS', () => {
    const lua = readFileSync(new URL('../lua/includes/chat-record.lua', import.meta.url), 'utf8');
    expect(lua).to.include(`'ZREMRANGEBYRANK', msgs, 0, -${CHAT_LIMITS.messagesPerChat + 1})`);
    expect(lua).to.include(`'ZREMRANGEBYRANK', unread, 0, -${CHAT_LIMITS.unreadPerChat + 1})`);
    expect(lua).to.include(`redis.call('ZCARD', index) - ${CHAT_LIMITS.chats}`);
  });

  it('When the chat index is over its bound, then the least recently active chat goes with its keys', async () => {
    const deviceId = newDevice();
    const index = keys.chatIndex(deviceId);
    // Fill the index to its bound with placeholder chats (cheaper than 5,000 messages).
    const args: (string | number)[] = [];
    for (let i = 0; i < CHAT_LIMITS.chats; i++) args.push(1000 + i, `1555002${String(i).padStart(4, '0')}`);
    await redis.zadd(index, ...args);
    const oldest = keys.chat(deviceId, '15550020000');
    await redis.hset(oldest, 'lastMessageId', 'x');
    await redis.zadd(`${oldest}:msgs`, 1, 'x');
    await receive(deviceId, '15550000031', 'newest', new Date());
    expect(await redis.zcard(index)).to.equal(CHAT_LIMITS.chats);
    expect(await redis.zscore(index, '15550020000')).to.equal(null);
    expect(await redis.exists(oldest, `${oldest}:msgs`)).to.equal(0);
  });

  it('When the account settings change, then the reject text is sealed and a null puts a field back', async () => {
    const deviceId = newDevice();
    expect(await readAccountSettings(redis, encryption, deviceId)).to.deep.equal({
      rejectCalls: false,
      rejectCallMessage: null,
      autoMarkRead: false,
      historySync: false,
    });
    const set = await writeAccountSettings(redis, encryption, deviceId, {
      rejectCalls: true,
      rejectCallMessage: 'I cannot take calls',
    });
    expect(set).to.deep.equal({
      rejectCalls: true,
      rejectCallMessage: 'I cannot take calls',
      autoMarkRead: false,
      historySync: false,
    });
    expect(await redis.hget(keys.deviceSettings(deviceId), 'rejectCallMessage')).to.not.include('calls');
    const back = await writeAccountSettings(redis, encryption, deviceId, { rejectCallMessage: null });
    expect(back.rejectCallMessage).to.equal(null);
  });
});
