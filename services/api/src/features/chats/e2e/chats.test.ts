import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { createRedis } from '@mgw/common';
import { CHAT_ERRORS, newMessageId, newPlatformMessageId, type MarkReadCommand } from '@mgw/contracts';
import { DeviceCommandResponder, PoolStore } from '@mgw/store';
import { adminCall, startAdminApi } from '../../../../test/helpers/admin.js';
import {
  call,
  createToken,
  freshDeviceId,
  markConnected,
  type TestApi,
} from '../../../../test/helpers/api.js';

/**
 * The chat routes against the real app and Redis: chats and pages from what the stores recorded,
 * validation, device scoping, pool tokens, the account settings, and mark-read with the holder's
 * reply (a stand-in answering as the sender's read-command.ts does). Every answer is checked
 * against the OpenAPI document by `call`. The whole way through the real client and the
 * simulator is services/sender/test/e2e/chats-and-calls.test.ts.
 */
describe('Chat routes (/chats…, /messages/:id/read, /settings)', () => {
  let t: TestApi;
  let deviceId: string;
  let token: string;
  let holder: Redis | undefined;
  const asked: MarkReadCommand[] = [];

  before(async () => {
    // With the admin API on: the dashboard's chat routes page the same way.
    t = await startAdminApi();
  });
  beforeEach(async () => {
    deviceId = freshDeviceId();
    token = await createToken(t, { deviceId });
    asked.length = 0;
  });
  afterEach(async () => {
    await holder?.quit();
    holder = undefined;
  });
  after(() => t.close());

  async function startHolder(receiptsShown: boolean): Promise<void> {
    holder = createRedis(t.config.redis.url, 'subscriber', 'test-holder');
    await new DeviceCommandResponder(holder, t.redis).listen(
      async (cmd, reply) => {
        if (cmd.type !== 'mark-read' || cmd.deviceId !== deviceId) return;
        asked.push(cmd);
        await reply({ ok: true, data: { receiptsShown } });
      },
      () => undefined,
    );
  }

  const receive = (from: string, text: string, at = new Date()) =>
    t.services.inbound.record(deviceId, {
      platformMessageId: newPlatformMessageId(),
      from,
      contact: { phone: from },
      text,
      receivedAt: at,
      waKey: { remoteJid: `${from}@s.whatsapp.net` },
    }) as Promise<string>;
  const send = async (to: string) => {
    const job = {
      kind: 'send' as const,
      messageId: newMessageId(),
      platformMessageId: newPlatformMessageId(),
      deviceId,
      to,
      contentId: newMessageId(),
      linkGeneration: 0,
      enqueuedAt: Date.now(),
    };
    await t.services.messages.claim(job);
    await t.services.messages.markSent(job, new Date());
    return job.messageId;
  };
  const get = (path: string, as = token) => call(`${t.api}${path}`, { token: as });
  const post = (path: string, as = token) => call(`${t.api}${path}`, { method: 'POST', token: as });

  it('When contacts wrote and the account sent, then GET /chats and GET /chats/:chatId/messages answer from the chat index', async () => {
    const t0 = Date.now() - 10_000;
    const first = await receive('15552000001', 'hello', new Date(t0));
    await receive('15552000002', 'hi', new Date(t0 + 1));
    const sent = await send('15552000001');

    const list = await get('/chats');
    expect(list.status, JSON.stringify(list.body)).to.equal(200);
    const chats = (list.body.data as { chats: Record<string, unknown>[] }).chats;
    expect(chats.map((c) => [c.id, c.unreadCount])).to.deep.equal([
      ['15552000001', 1],
      ['15552000002', 1],
    ]);
    expect(chats[0]!.contact).to.deep.equal({ phone: '15552000001' });
    // The answer was sent from no content the API knows (the test wrote its record alone): no text.
    expect(chats[0]!.lastMessage).to.include({ messageId: sent, direction: 'outbound' });
    expect(chats[1]!.lastMessage).to.include({ direction: 'inbound', text: 'hi' });

    const page = await get('/chats/15552000001/messages?limit=1');
    expect(page.status).to.equal(200);
    const data = page.body.data as { messages: Record<string, unknown>[]; nextCursor: string };
    expect(data.messages.map((m) => m.messageId)).to.deep.equal([sent]);
    const older = await get(`/chats/15552000001/messages?limit=1&cursor=${data.nextCursor}`);
    const olderData = older.body.data as { messages: Record<string, unknown>[]; nextCursor?: string };
    expect(olderData.messages.map((m) => [m.messageId, m.text])).to.deep.equal([[first, 'hello']]);
    expect(olderData.nextCursor).to.equal(undefined);
    // An unknown chat is 404, answered by the page's own script (no second read).
    const unknown = await get('/chats/15552000099/messages');
    expect([unknown.status, unknown.body.error]).to.deep.equal([404, CHAT_ERRORS.notFound]);

    // The dashboard's route (admin API) answers the same page, and the same 404.
    const admin = await adminCall(t, `/devices/${deviceId}/chats/15552000001/messages?limit=2`);
    expect(admin.status, JSON.stringify(admin.body)).to.equal(200);
    expect((admin.body.messages as Record<string, unknown>[]).map((m) => m.messageId)).to.deep.equal([
      sent,
      first,
    ]);
    const adminUnknown = await adminCall(t, `/devices/${deviceId}/chats/15552000099/messages`);
    expect([adminUnknown.status, adminUnknown.body.error]).to.deep.equal([404, CHAT_ERRORS.notFound]);
  });

  it('When the query, the chat id or the body is wrong, then 400 names the field', async () => {
    const cases: [string, string, unknown, string][] = [
      ['GET', '/chats?limit=0', undefined, 'limit'],
      ['GET', '/chats?cursor=nope', undefined, 'cursor'],
      ['GET', '/chats?extra=1', undefined, 'extra'],
      ['GET', '/chats/abc/messages', undefined, 'chatId'],
      ['GET', '/chats/15552000001/messages?cursor=x', undefined, 'cursor'],
      ['POST', '/chats/not-a-chat/read', undefined, 'chatId'],
      ['PATCH', '/settings', {}, ''],
      ['PATCH', '/settings', { rejectCalls: 'yes' }, 'rejectCalls'],
      ['PATCH', '/settings', { rejectCallMessage: 'x'.repeat(1001) }, 'rejectCallMessage'],
      ['PATCH', '/settings', { other: true }, 'other'],
    ];
    for (const [method, path, json, field] of cases) {
      const res = await call(`${t.api}${path}`, { method, token, ...(json === undefined ? {} : { json }) });
      expect(res.status, `${method} ${path}`).to.equal(400);
      const details = res.body.details as { path: string[] }[];
      if (field) expect(details[0]!.path[0], `${method} ${path}`).to.equal(field);
    }
  });

  it('When another device’s token or a pool token asks, then it sees nothing of the chats (404, empty) or is refused (403)', async () => {
    const message = await receive('15552000011', 'mine');
    const other = await createToken(t, { deviceId: freshDeviceId() });
    expect((await get('/chats', other)).body.data).to.deep.equal({ chats: [] });
    expect((await get('/chats/15552000011/messages', other)).status).to.equal(404);
    expect((await post('/chats/15552000011/read', other)).status).to.equal(404);
    expect((await post(`/messages/${message}/read`, other)).status).to.equal(404);

    const poolId = `p${Math.random().toString(36).slice(2, 9)}`;
    await new PoolStore(t.redis).create({ id: poolId, name: 'pool', devices: [deviceId] });
    const { value: pool } = await t.services.tokens.create({ name: 'pool', poolId });
    for (const [method, path] of [
      ['GET', '/chats'],
      ['GET', '/chats/15552000011/messages'],
      ['POST', '/chats/15552000011/read'],
      ['POST', `/messages/${message}/read`],
      ['GET', '/settings'],
    ]) {
      const res = await call(`${t.api}${path}`, { method, token: pool });
      expect(res.status, `${method} ${path}`).to.equal(403);
    }
  });

  it('When a chat is marked read, then the holder is asked for exactly its unread messages, and what it says about privacy is answered', async () => {
    const a = await receive('15552000021', 'one');
    const b = await receive('15552000021', 'two');
    // Not connected: 409, nothing marked.
    expect((await post('/chats/15552000021/read')).status).to.equal(409);
    await markConnected(t.redis, deviceId);
    await startHolder(false);
    const read = await post('/chats/15552000021/read');
    expect(read.status, JSON.stringify(read.body)).to.equal(200);
    expect(read.body.data).to.deep.equal({
      chatId: '15552000021',
      marked: 2,
      receiptsShown: false,
      unreadCount: 0,
    });
    expect(asked).to.have.length(1);
    expect(asked[0]!.keys.map((k) => k.remoteJid)).to.deep.equal([
      '15552000021@s.whatsapp.net',
      '15552000021@s.whatsapp.net',
    ]);
    expect(a && b).to.be.a('string');
    // An outbound message is not one a contact wrote.
    const mine = await send('15552000021');
    const outbound = await post(`/messages/${mine}/read`);
    expect(outbound.status).to.equal(404);
    expect(outbound.body.error).to.equal('Only a message a contact wrote can be marked read');
  });

  it('When the settings are read and changed, then the answer is the settings now', async () => {
    expect((await get('/settings')).body.data).to.deep.equal({
      rejectCalls: false,
      rejectCallMessage: null,
      autoMarkRead: false,
      historySync: false,
    });
    const set = await call(`${t.api}/settings`, {
      method: 'PATCH',
      token,
      json: { rejectCalls: true, rejectCallMessage: '  Please write instead  ' },
    });
    expect(set.status).to.equal(200);
    expect(set.body.data).to.deep.equal({
      rejectCalls: true,
      rejectCallMessage: 'Please write instead',
      autoMarkRead: false,
      historySync: false,
    });
    const history = await call(`${t.api}/settings`, { method: 'PATCH', token, json: { historySync: true } });
    expect(history.body.data).to.include({ historySync: true, rejectCalls: true });
    const wrong = await call(`${t.api}/settings`, { method: 'PATCH', token, json: { historySync: 'yes' } });
    expect(wrong.status).to.equal(400);
    expect(JSON.stringify(wrong.body)).to.include('historySync');
    const put = await call(`${t.api}/settings`, { method: 'PUT', token, json: {} });
    expect(put.status).to.equal(405);
  });
});
