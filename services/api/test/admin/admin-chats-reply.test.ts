import { expect } from 'chai';
import { CHAT_ERRORS, ERRORS, newPlatformMessageId } from '@mgw/contracts';
import {
  call,
  createToken,
  freshDeviceId,
  markConnected,
  type JsonResponse,
  type TestApi,
} from '../helpers/api.js';
import { adminCall, signIn, startAdminApi, type AdminSessionClient } from '../helpers/admin.js';

const paths = (body: Record<string, unknown>) =>
  ((body.details ?? []) as { path: (string | number)[] }[]).map((d) => d.path.join('.'));

describe('Admin API: replying in a chat and marking it read (the Chats page), as the public /send and /chats/:chatId/read', () => {
  let t: TestApi;
  let admin: AdminSessionClient;
  const connected = freshDeviceId();
  const contact = '15552600011';

  before(async () => {
    t = await startAdminApi();
    await markConnected(t.redis, connected);
    admin = await signIn(t);
  });
  after(() => t.close());

  const reply = (deviceId: string, chatId: string, json: unknown) =>
    admin.call(`/devices/${deviceId}/chats/${encodeURIComponent(chatId)}/messages`, { json });
  /** What the public route answers the device's own token for the same request. */
  const publicCall = async (deviceId: string, path: string, json?: unknown): Promise<JsonResponse> =>
    call(`${t.api}${path}`, { method: 'POST', token: await createToken(t, { deviceId }), json });

  it('When the operator replies to a contact, then 202 with the messageId, and it is a queued message of the device to that contact', async () => {
    const res = await reply(connected, contact, { text: 'Yes, size M is in stock.' });
    expect(res.status, JSON.stringify(res.body)).to.equal(202);
    expect(Object.keys(res.body).sort()).to.deep.equal(['messageId', 'success']);
    expect(res.body.success).to.equal(true);
    const record = await t.services.messages.get(connected, String(res.body.messageId));
    expect(record, 'the message record').to.not.equal(undefined);
    expect(record!.status).to.equal('queued');
    expect(record!.to).to.equal(contact);
    // Through the admin token too (automation).
    const byToken = await adminCall(t, `/devices/${connected}/chats/${contact}/messages`, {
      json: { text: 'Second line' },
    });
    expect(byToken.status, JSON.stringify(byToken.body)).to.equal(202);
  });

  it('When the operator replies in a group, then it is accepted as a /send to the group id', async () => {
    const res = await reply(connected, '120363012345678901@g.us', { text: 'Hello group' });
    expect(res.status, JSON.stringify(res.body)).to.equal(202);
  });

  it('When the body is not one text within the /send limits, then 400 with the envelope naming `text`', async () => {
    const bodies: unknown[] = [
      {},
      { text: '' },
      { text: 'x'.repeat(65_537) },
      { text: '\ud800' },
      { text: 42 },
      { text: ['a'] },
      { text: 'ok', to: '15550000000' },
    ];
    for (const json of bodies) {
      const res = await reply(connected, contact, json);
      const what = JSON.stringify(json).slice(0, 60);
      expect(res.status, what).to.equal(400);
      expect(res.body.success, what).to.equal(false);
      expect(res.body.error, what).to.equal(ERRORS.invalidRequest);
      expect(paths(res.body), what).to.have.length(1);
    }
    // The longest text /send takes is taken.
    expect((await reply(connected, contact, { text: 'x'.repeat(65_536) })).status).to.equal(202);
  });

  it('When the chat id is no chat id, then 400 naming `chatId`', async () => {
    for (const chatId of ['abc', 'status@broadcast', '123@newsletter', '12']) {
      const res = await reply(connected, chatId, { text: 'hi' });
      expect(res.status, chatId).to.equal(400);
      expect(res.body).to.include({ success: false, error: ERRORS.invalidRequest });
      expect(paths(res.body), chatId).to.deep.equal(['chatId']);
    }
  });

  it('When the device is not connected, then the reply is refused as the public /send refuses it (409 no device)', async () => {
    const unknown = freshDeviceId();
    const res = await reply(unknown, contact, { text: 'hi' });
    const pub = await publicCall(unknown, '/send', { to: contact, text: 'hi' });
    expect(pub.status).to.equal(409);
    expect(res.status).to.equal(pub.status);
    expect(res.body).to.deep.equal(pub.body);
    expect(res.body).to.deep.equal({ success: false, error: ERRORS.noDevice });
  });

  it('When there is no session, or no CSRF token, then 401 or 403 as every admin change', async () => {
    const anonymous = await call(`${t.url}/api/admin/v1/devices/${connected}/chats/${contact}/messages`, {
      json: { text: 'hi' },
    });
    expect(anonymous.status).to.equal(401);
    expect(anonymous.body.success).to.equal(false);
    const noCsrf = await admin.call(`/devices/${connected}/chats/${contact}/messages`, {
      json: { text: 'hi' },
      csrf: false,
    });
    expect(noCsrf.status).to.equal(403);
    expect(noCsrf.body.success).to.equal(false);
    const readNoCsrf = await admin.call(`/devices/${connected}/chats/${contact}/read`, {
      method: 'POST',
      csrf: false,
    });
    expect(readNoCsrf.status).to.equal(403);
  });

  it('When a chat is marked read, then the answer is the public route’s: 404 for no such chat, the holder’s 409 with no live device', async () => {
    const deviceId = freshDeviceId();
    const missing = await admin.call(`/devices/${deviceId}/chats/${contact}/read`, { method: 'POST' });
    expect(missing.status).to.equal(404);
    expect(missing.body).to.deep.equal({ success: false, error: CHAT_ERRORS.notFound });

    await t.services.inbound.record(deviceId, {
      platformMessageId: newPlatformMessageId(),
      from: contact,
      contact: { phone: contact },
      text: 'Is it in stock?',
      receivedAt: new Date(),
      waKey: { remoteJid: `${contact}@s.whatsapp.net` },
    });
    const res = await admin.call(`/devices/${deviceId}/chats/${contact}/read`, { method: 'POST' });
    const pub = await publicCall(deviceId, `/chats/${contact}/read`);
    expect(pub.status).to.equal(409);
    expect(res.status).to.equal(pub.status);
    expect(res.body).to.deep.equal(pub.body);
    expect(res.body).to.deep.equal({ success: false, error: ERRORS.noDevice });
    // Nothing was marked: the message is still unread.
    expect(await t.services.chats.unread(deviceId, contact)).to.have.length(1);

    const withBody = await admin.call(`/devices/${deviceId}/chats/${contact}/read`, { json: { x: 1 } });
    expect(withBody.status).to.equal(400);
    const badId = await admin.call(`/devices/${deviceId}/chats/abc/read`, { method: 'POST' });
    expect(badId.status).to.equal(400);
    expect(paths(badId.body)).to.deep.equal(['chatId']);
  });
});
