import { expect } from 'chai';
import { CHAT_ERRORS, ERRORS, KIND_ERRORS, newPlatformMessageId } from '@mgw/contracts';
import { useStack, waitFor } from '@mgw/testing';
import {
  call,
  createToken,
  freshDeviceId,
  markConnected,
  type JsonResponse,
  type TestApi,
} from '../../../../test/helpers/api.js';
import { adminCall, signIn, startAdminApi, type AdminSessionClient } from '../../../../test/helpers/admin.js';

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

  it('When the operator replies with an attachment, then 202 and a queued message to the contact, as the public /send takes it', async () => {
    const png = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex'); // a PNG's first bytes
    const res = await reply(connected, contact, {
      attachment: {
        type: 'image',
        base64: png.toString('base64'),
        filename: 'size-chart.png',
        mimeType: 'image/png',
        caption: 'The size chart',
      },
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(202);
    const record = await t.services.messages.get(connected, String(res.body.messageId));
    expect(record!.status).to.equal('queued');
    expect(record!.to).to.equal(contact);
    // A URL, as /send takes one.
    const byUrl = await reply(connected, contact, {
      attachment: { type: 'document', url: 'https://example.com/catalogue.pdf' },
    });
    expect(byUrl.status, JSON.stringify(byUrl.body)).to.equal(202);
  });

  it('When the body is over the public /send’s limits, then 413 as /send answers: the body’s 15 MB, an attachment’s 10 MB', async () => {
    const deviceId = freshDeviceId();
    await markConnected(t.redis, deviceId);
    // Over 15 MB of body: refused before it is read, with /send's error.
    const huge = { attachment: { type: 'document', base64: 'A'.repeat(15 * 1024 * 1024 + 8) } };
    const res = await reply(deviceId, contact, huge);
    const pub = await publicCall(deviceId, '/send', { to: contact, ...huge });
    expect(pub.status).to.equal(413);
    expect(res.status).to.equal(413);
    expect(res.body).to.deep.equal(pub.body);
    expect(res.body).to.deep.equal({ success: false, error: ERRORS.bodyTooLarge });
    // Within the body limit, but more than 10 MB of file.
    const big = {
      attachment: { type: 'document', base64: 'A'.repeat(Math.ceil((10 * 1024 * 1024 + 1) / 3) * 4) },
    };
    const over = await reply(deviceId, contact, big);
    const pubOver = await publicCall(deviceId, '/send', { to: contact, ...big });
    expect(pubOver.status).to.equal(413);
    expect(over.status).to.equal(413);
    expect(over.body).to.deep.equal(pubOver.body);
    expect(over.body).to.deep.equal({ success: false, error: ERRORS.attachmentTooLarge });
  });

  it('When the body is no text, attachment or reaction within the /send rules, then 400 naming what is wrong', async () => {
    // The body as a whole (its detail names the fields it lacks or has too many of), or one field.
    const whole = /^a reply (must have|has only one of) text, attachment or reaction$/;
    const bodies: [unknown, string | RegExp][] = [
      [{}, whole],
      [{ text: 'hi', attachment: { type: 'image', url: 'https://example.com/a.png' } }, whole],
      [{ text: 'hi', reaction: { messageId: 'm', emoji: '👍' } }, whole],
      [{ attachment: { type: 'image' } }, 'attachment'],
      [{ attachment: { type: 'gif', base64: 'AAAA' } }, 'attachment.type'],
      [{ attachment: { type: 'image', base64: '!!!' } }, 'attachment.base64'],
      [{ attachment: { type: 'image', base64: 'AAAA', caption: 'x'.repeat(1025) } }, 'attachment.caption'],
      [{ attachment: { type: 'image', base64: 'AAAA', filename: '..' } }, 'attachment.filename'],
      [{ reaction: { messageId: 'm', emoji: 'ok' } }, 'reaction.emoji'],
      [{ reaction: { emoji: '👍' } }, 'reaction.messageId'],
      [{ reaction: { messageId: '', emoji: '👍' } }, 'reaction.messageId'],
    ];
    for (const [json, expected] of bodies) {
      const res = await reply(connected, contact, json);
      const what = JSON.stringify(json).slice(0, 80);
      expect(res.status, what).to.equal(400);
      expect(res.body.error, what).to.equal(ERRORS.invalidRequest);
      const details = res.body.details as { message: string }[];
      expect(details, what).to.have.length(1);
      if (typeof expected === 'string') expect(paths(res.body), what).to.deep.equal([expected]);
      else expect(details[0]!.message, what).to.match(expected);
    }
  });

  it('When the operator reacts, then a contact’s message (our id of it) is a target, an unknown one is 404 and another chat’s 400, as /send answers', async () => {
    const deviceId = freshDeviceId();
    await markConnected(t.redis, deviceId);
    const messageId = (await t.services.inbound.record(deviceId, {
      platformMessageId: newPlatformMessageId(),
      from: contact,
      contact: { phone: contact },
      text: 'Do you ship abroad?',
      receivedAt: new Date(),
      waKey: { remoteJid: `${contact}@s.whatsapp.net` },
    }))!;
    const res = await reply(deviceId, contact, { reaction: { messageId, emoji: '👍' } });
    expect(res.status, JSON.stringify(res.body)).to.equal(202);
    const record = await t.services.messages.get(deviceId, String(res.body.messageId));
    expect(record!.to).to.equal(contact);
    const removed = await reply(deviceId, contact, { reaction: { messageId, emoji: '' } });
    expect(removed.status, JSON.stringify(removed.body)).to.equal(202);

    const reaction = { messageId: 'no-such-message', emoji: '👍' };
    const unknown = await reply(deviceId, contact, { reaction });
    const pub = await publicCall(deviceId, '/send', { to: contact, reaction });
    expect(pub.status).to.equal(404);
    expect(unknown.status).to.equal(404);
    expect(unknown.body).to.deep.equal(pub.body);
    expect(unknown.body).to.include({ success: false, error: KIND_ERRORS.reactionTargetNotFound });
    const otherChat = await reply(deviceId, '15552600099', { reaction: { messageId, emoji: '👍' } });
    expect(otherChat.status).to.equal(400);
    expect(paths(otherChat.body)).to.deep.equal(['to']);
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

/** A message as the simulator's contact received it (GET /inbox/:phone). */
interface Arrived {
  id: string;
  type: string;
  caption?: string;
  fileName?: string;
  mimetype?: string;
  fileLength?: number;
  emoji?: string;
  targetId?: string;
}

describe('Admin API: an attachment and a reaction from the Chats page reach the contact (whole stack, simulator)', function () {
  this.timeout(180_000);
  const ADMIN_TOKEN = 'admin-chats-reply-token-0123456789abcdef';
  const stack = useStack({ allInOne: true, env: { ADMIN_API_TOKEN: ADMIN_TOKEN } });
  const account = '15552600001';
  const ana = '15552600021';

  before(async () => {
    await stack().linkByQr(account, 'Reply Shop');
  });

  const chatReply = (body: unknown) =>
    stack().adminApi<{ messageId: string }>(
      ADMIN_TOKEN,
      'POST',
      `/devices/${stack().deviceId}/chats/${ana}/messages`,
      body,
    );
  const arrived = async (what: string, test: (m: Arrived) => boolean): Promise<Arrived> => {
    let found: Arrived | undefined;
    await waitFor(async () => !!(found = ((await stack().inbox(ana)) as Arrived[]).find(test)), {
      timeoutMs: 60_000,
      what,
    });
    return found!;
  };

  it('When the operator sends an image with a caption, then the contact gets an image of those bytes with that caption', async () => {
    // A 1×1 PNG.
    const bytes = Buffer.from(
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
      'base64',
    );
    const res = await chatReply({
      attachment: {
        type: 'image',
        base64: bytes.toString('base64'),
        filename: 'size-chart.png',
        mimeType: 'image/png',
        caption: 'Our size chart',
      },
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(202);
    const image = await arrived('the image', (m) => m.type === 'image');
    expect(image).to.include({ caption: 'Our size chart', fileLength: bytes.length, mimetype: 'image/png' });
  });

  it('When the operator reacts to the contact’s message (its id on the chat page) and removes it, then the contact gets both reactions on that message', async () => {
    const wrote = await stack().simApi<{ id: string }>('POST', `/contacts/${ana}/send`, {
      to: account,
      text: 'Thanks, ordering now!',
    });
    let messageId = '';
    await waitFor(
      async () => {
        const page = await stack().adminApi<{ messages: { messageId: string; text?: string }[] }>(
          ADMIN_TOKEN,
          'GET',
          `/devices/${stack().deviceId}/chats/${ana}/messages`,
        );
        messageId = page.body.messages?.find((m) => m.text === 'Thanks, ordering now!')?.messageId ?? '';
        return messageId !== '';
      },
      { timeoutMs: 30_000, what: 'the contact’s message on the chat page' },
    );
    const res = await chatReply({ reaction: { messageId, emoji: '👍' } });
    expect(res.status, JSON.stringify(res.body)).to.equal(202);
    await arrived(
      'the reaction',
      (m) => m.type === 'reaction' && m.emoji === '👍' && m.targetId === wrote.id,
    );
    const undo = await chatReply({ reaction: { messageId, emoji: '' } });
    expect(undo.status, JSON.stringify(undo.body)).to.equal(202);
    await arrived('the removal', (m) => m.type === 'reaction' && m.emoji === '' && m.targetId === wrote.id);
  });
});
