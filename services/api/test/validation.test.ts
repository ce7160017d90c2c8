import { expect } from 'chai';
import { ATTACHMENT_MAX_BYTES, ERRORS, keys, SEND_ADDRESS_RULE } from '@mgw/contracts';
import {
  call,
  createToken,
  freshDeviceId,
  markConnected,
  startApi,
  type JsonResponse,
  type TestApi,
} from './helpers/api.js';
import { adminCall, startAdminApi } from './helpers/admin.js';

// Request validation, against the real app and Redis: the 400 `Invalid request data` answers of
// /send, /otp, /connect and the query (exact details), the size limits (413), and text that must
// be valid Unicode — names, file names, media types and proxy URLs (issue 52).

const PHONE = '15551234567';
const PHONE_RULE = 'must be a phone number in international format: digits only, 7 to 15';
const TO_RULE = SEND_ADDRESS_RULE;

function invalid(details: { path: (string | number)[]; message: string }[]) {
  return { success: false, error: 'Invalid request data', details };
}

describe('API request validation', () => {
  let t: TestApi;
  let token: string;
  let deviceId: string;
  before(async () => {
    t = await startApi({ maxRecipients: 3 });
    deviceId = freshDeviceId();
    token = await createToken(t, { deviceId });
    await markConnected(t.redis, deviceId);
  });
  after(async () => t.close());

  const send = (json: unknown) => call(`${t.api}/send`, { token, json });
  /** What the API logged as failed, to tell why an answer was not the one expected. */
  const failures = () => JSON.stringify(t.logs.filter((l) => l.level === 'error').slice(-3));
  const otp = (json: unknown) => call(`${t.api}/otp`, { token, json });

  it('When the path has a malformed %-escape, then 400 Invalid request data, not a 500', async () => {
    const res = await call(`${t.api}/messages/%E0%A4%A`, { token });
    expect(res.status).to.equal(400);
    expect(res.body).to.deep.equal(invalid([{ path: [], message: 'Malformed request' }]));
  });

  it('When `to` is a list of a million entries, then 400 at once with the list limit', async () => {
    const res = await send({ to: new Array(1_000_000).fill(0), text: 'x' });
    expect(res.status).to.equal(400);
    expect(res.body).to.deep.equal(
      invalid([{ path: ['to'], message: 'to may list at most 3 phone numbers' }]),
    );
  });

  it('When /send has neither text nor attachment, then 400 with the either-text-or-attachment detail', async () => {
    const res = await send({ to: PHONE });
    expect(res.status).to.equal(400);
    expect(res.body).to.deep.equal(
      invalid([{ path: ['text', 'attachment'], message: 'Either text or attachment must be provided' }]),
    );
  });

  it('When /send has an empty body, then 400 naming `to` and the either-text-or-attachment rule', async () => {
    const res = await send({});
    expect(res.status).to.equal(400);
    expect(res.body).to.deep.equal(
      invalid([
        { path: ['to'], message: 'to is required' },
        { path: ['text', 'attachment'], message: 'Either text or attachment must be provided' },
      ]),
    );
  });

  const sendCases: [string, unknown, { path: (string | number)[]; message: string }[]][] = [
    [
      'a phone number with +',
      { to: '+15551234567', text: 'x' },
      [{ path: ['to'], message: `to ${TO_RULE}` }],
    ],
    ['a too short phone number', { to: '123456', text: 'x' }, [{ path: ['to'], message: `to ${TO_RULE}` }]],
    ['a LID that is no LID', { to: '12a@lid', text: 'x' }, [{ path: ['to'], message: `to ${TO_RULE}` }]],
    [
      'a LID with a device in a list',
      { to: [PHONE, '123456789:3@lid'], text: 'x' },
      [{ path: ['to', 1], message: `to[1] ${TO_RULE}` }],
    ],
    [
      'a duplicate recipient',
      { to: [PHONE, PHONE], text: 'x' },
      [{ path: ['to', 1], message: 'to lists the same phone number twice' }],
    ],
    [
      'more recipients than MAX_RECIPIENTS',
      { to: ['15550000001', '15550000002', '15550000003', '15550000004'], text: 'x' },
      [{ path: ['to'], message: 'to may list at most 3 phone numbers' }],
    ],
    [
      'an empty recipient list',
      { to: [], text: 'x' },
      [{ path: ['to'], message: 'to must list at least one phone number' }],
    ],
    [
      'a number as `to`',
      { to: 15551234567, text: 'x' },
      [{ path: ['to'], message: 'to must be a phone number or a non-empty array of phone numbers' }],
    ],
    [
      'an empty text',
      { to: PHONE, text: '' },
      [{ path: ['text'], message: 'text is not allowed to be empty' }],
    ],
    [
      'an unknown field',
      { to: PHONE, text: 'x', extra: 1 },
      [{ path: ['extra'], message: 'extra is not allowed' }],
    ],
    [
      'an unknown attachment type',
      { to: PHONE, attachment: { type: 'gif', url: 'https://example.test/a.gif' } },
      [
        {
          path: ['attachment', 'type'],
          message: 'attachment.type must be one of [image, video, audio, document, sticker]',
        },
      ],
    ],
    [
      'an attachment without url or base64',
      { to: PHONE, attachment: { type: 'image' } },
      [{ path: ['attachment'], message: 'attachment must have either url, base64 or mediaId' }],
    ],
    [
      'an attachment with both url and base64',
      { to: PHONE, attachment: { type: 'image', url: 'https://example.test/a.png', base64: 'AAAA' } },
      [{ path: ['attachment'], message: 'attachment must have only one of url, base64 or mediaId' }],
    ],
    [
      'a non-http attachment url',
      { to: PHONE, attachment: { type: 'image', url: 'ftp://example.test/a.png' } },
      [
        {
          path: ['attachment', 'url'],
          message: 'attachment.url must be a valid uri with a scheme matching the http|https pattern',
        },
      ],
    ],
    [
      'attachment data that is not base64',
      { to: PHONE, attachment: { type: 'image', base64: '!!!' } },
      [{ path: ['attachment', 'base64'], message: 'attachment.base64 must be a valid base64 string' }],
    ],
  ];
  for (const [what, body, details] of sendCases) {
    it(`When /send has ${what}, then 400 with exact details`, async () => {
      const res = await send(body);
      expect(res.status).to.equal(400);
      expect(res.body).to.deep.equal(invalid(details));
    });
  }

  const otpCases: [string, unknown, { path: (string | number)[]; message: string }[]][] = [
    [
      'no fields',
      {},
      [
        { path: ['phone'], message: 'phone is required' },
        { path: ['code'], message: 'code is required' },
      ],
    ],
    [
      'a 3-digit code',
      { phone: PHONE, code: '123' },
      [{ path: ['code'], message: 'code must be 4 to 8 digits (0-9 only)' }],
    ],
    [
      'a 9-digit code',
      { phone: PHONE, code: '123456789' },
      [{ path: ['code'], message: 'code must be 4 to 8 digits (0-9 only)' }],
    ],
    [
      'a code with letters',
      { phone: PHONE, code: '12a4' },
      [{ path: ['code'], message: 'code must be 4 to 8 digits (0-9 only)' }],
    ],
    [
      'an unknown language',
      { phone: PHONE, code: '1234', language: 'French' },
      [{ path: ['language'], message: 'language must be one of [English, Arabic]' }],
    ],
    ['a bad phone', { phone: '0123', code: '1234' }, [{ path: ['phone'], message: `phone ${PHONE_RULE}` }]],
  ];
  for (const [what, body, details] of otpCases) {
    it(`When /otp has ${what}, then 400 with exact details`, async () => {
      const res = await otp(body);
      expect(res.status).to.equal(400);
      expect(res.body).to.deep.equal(invalid(details));
    });
  }

  it('When the JSON body is malformed, then 400 Invalid request data', async () => {
    const res = await call(`${t.api}/send`, {
      token,
      body: '{"to": "15551234567", ',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).to.equal(400);
    expect(res.body).to.deep.equal(invalid([{ path: [], message: 'Malformed JSON body' }]));
  });

  it('When a POST body is not sent as application/json, then 400 naming the content type', async () => {
    const wrong = await call(`${t.api}/send`, {
      token,
      body: JSON.stringify({ to: PHONE, text: 'x' }),
      headers: { 'content-type': 'text/plain' },
    });
    const missing = await call(`${t.api}/send`, {
      token,
      body: Buffer.from(JSON.stringify({ to: PHONE, text: 'x' })),
    });
    for (const res of [wrong, missing]) {
      expect(res.status).to.equal(400);
      expect(res.body).to.deep.equal(
        invalid([{ path: [], message: 'Request bodies must be application/json' }]),
      );
    }
  });

  it('When odd but well-formed input arrives, then 400s, never a 500', async () => {
    const arrayBody = await send([]);
    const badKey = await call(`${t.api}/send`, {
      token,
      json: { to: PHONE, text: 'x' },
      headers: { 'Idempotency-Key': 'x'.repeat(256) },
    });
    const badCharset = await call(`${t.api}/send`, {
      token,
      body: JSON.stringify({ to: PHONE, text: 'x' }),
      headers: { 'content-type': 'application/json; charset=klingon' },
    });
    const twoTokens = await call(`${t.api}/status?token=a&token=b`);

    expect(arrayBody.status).to.equal(400);
    expect(arrayBody.body).to.deep.equal(invalid([{ path: [], message: 'value must be of type object' }]));
    expect(badKey.status).to.equal(400);
    expect(badKey.body).to.deep.equal(
      invalid([
        { path: ['Idempotency-Key'], message: 'Idempotency-Key must be 1 to 255 printable ASCII characters' },
      ]),
    );
    expect(badCharset.status).to.equal(400);
    expect(badCharset.body.error).to.equal('Invalid request data');
    expect(twoTokens.status).to.equal(401);
  });

  it('When a query parameter is not part of the endpoint, then 400', async () => {
    const res = await call(`${t.api}/status?verbose=1`, { token });
    expect(res.status).to.equal(400);
    expect(res.body).to.deep.equal(invalid([{ path: ['verbose'], message: 'verbose is not allowed' }]));
  });

  it('When /connect asks for a pairing code without a phone number or with bad flags, then 400', async () => {
    const noPhone = await call(`${t.api}/connect?method=pairingCode`, { token, method: 'POST' });
    const badFlags = await call(`${t.api}/connect?method=sms&forceNew=maybe`, { token });
    expect(noPhone.status).to.equal(400);
    expect(noPhone.body).to.deep.equal(
      invalid([{ path: ['phoneNumber'], message: 'phoneNumber is required' }]),
    );
    expect(badFlags.body).to.deep.equal(
      invalid([
        { path: ['method'], message: 'method must be one of [qrCode, pairingCode]' },
        { path: ['forceNew'], message: 'forceNew must be a boolean' },
      ]),
    );
  });

  it('When an attachment decodes to just over 10 MB, then 413 and nothing is stored', async () => {
    const base64 = Buffer.alloc(ATTACHMENT_MAX_BYTES + 1, 7).toString('base64');
    // This device's contents only: other suites' expiring keys may come and go meanwhile.
    const before = await t.redis.keys(keys.content(deviceId, '*'));
    const res = await send({ to: PHONE, attachment: { type: 'document', base64 } });
    expect(res.status, failures()).to.equal(413);
    expect(res.body).to.deep.equal({ success: false, error: 'Attachment too large: the limit is 10 MB' });
    expect(await t.redis.keys(keys.content(deviceId, '*'))).to.deep.equal(before);
  });

  it('When an attachment decodes to exactly 10 MB, then it is accepted (202)', async () => {
    const base64 = Buffer.alloc(ATTACHMENT_MAX_BYTES, 7).toString('base64');
    const res = await send({ to: PHONE, attachment: { type: 'document', base64, filename: 'a.bin' } });
    expect(res.status, failures()).to.equal(202);
  });

  it('When `to` is a LID ("<digits>@lid"), alone or in a list with numbers, then it is accepted (202)', async () => {
    expect((await send({ to: '123456789012345@lid', text: 'x' })).status, failures()).to.equal(202);
    expect((await send({ to: [PHONE, '123456789012345@lid'], text: 'x' })).status, failures()).to.equal(202);
  });

  it('When the body is larger than the JSON parser limit, then 413 (not 500)', async () => {
    const res = await call(`${t.api}/send`, {
      token,
      body: JSON.stringify({ to: PHONE, text: 'x'.repeat(16 * 1024 * 1024) }),
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).to.equal(413);
    expect(res.body).to.deep.equal({
      success: false,
      error: 'Request body too large: attachments are limited to 10 MB',
    });
  });
});

/**
 * Issue 52: what an evaluator stored through the API and could not read back. Each input is now a
 * 400 `Invalid request data` naming its field, against the real app and Redis (every answer checked
 * against the OpenAPI document by `call`).
 */
describe('text that is valid Unicode: names, file names, media types and proxy URLs (issue 52)', function () {
  this.timeout(20_000);
  let t: TestApi;
  let token: string;
  const deviceId = freshDeviceId();
  const PDF = Buffer.from('%PDF-1.4\n% our menu for this week\n');

  before(async () => {
    t = await startAdminApi();
    token = await createToken(t, { deviceId });
    await markConnected(t.redis, deviceId);
  });
  after(async () => t.close());

  const refused = (res: JsonResponse, path: string[], message?: RegExp) => {
    expect(res.status, JSON.stringify(res.body)).to.equal(400);
    expect(res.body).to.include({ success: false, error: ERRORS.invalidRequest });
    const details = res.body.details as { path: string[]; message: string }[];
    expect(details[0]?.path).to.deep.equal(path);
    if (message) expect(details[0]?.message).to.match(message);
    return details[0]!.message;
  };

  const LONE = /must be valid Unicode text: it has a lone surrogate/;
  const HIDDEN = /must not contain control characters, direction controls or invisible characters/;

  it('When a profile name, channel name, label name or group subject has a lone surrogate, then 400 naming the field', async () => {
    const routes: [string, string, (v: string) => unknown, string[]][] = [
      ['PATCH', '/profile', (name) => ({ name }), ['name']],
      ['POST', '/channels', (name) => ({ name }), ['name']],
      ['PATCH', '/channels/120363000000000001@newsletter', (name) => ({ name }), ['name']],
      ['POST', '/labels', (name) => ({ name }), ['name']],
      ['PATCH', '/labels/12', (name) => ({ name }), ['name']],
      ['POST', '/groups', (subject) => ({ subject, participants: ['15551234567'] }), ['subject']],
      ['PATCH', '/groups/120363012345678901@g.us', (subject) => ({ subject }), ['subject']],
    ];
    for (const [method, path, body, field] of routes) {
      for (const lone of ['\ud800', 'Team \udfff'])
        refused(await call(`${t.api}${path}`, { method, token, json: body(lone) }), field, LONE);
    }
    // Message text too: a lone surrogate anywhere, the fast path of a plain text send included.
    refused(
      await call(`${t.api}/send`, { token, json: { to: '15551234567', text: 'hi \ud800' } }),
      ['text'],
      LONE,
    );
  });

  it('When a label or channel name has NUL, bidi or zero-width characters, then 400 naming the field and the character', async () => {
    for (const name of ['\u202e\u200b', 'a\u0000b', 'admin\u2066', '\ufeffTeam']) {
      const label = refused(await call(`${t.api}/labels`, { token, json: { name } }), ['name'], HIDDEN);
      expect(label).to.match(/\(found U\+[0-9A-F]{4}\)$/);
      refused(await call(`${t.api}/channels`, { token, json: { name } }), ['name'], HIDDEN);
      refused(await call(`${t.api}/profile`, { method: 'PATCH', token, json: { name } }), ['name'], HIDDEN);
      refused(
        await call(`${t.api}/groups`, { token, json: { subject: name, participants: ['15551234567'] } }),
        ['subject'],
        HIDDEN,
      );
    }
  });

  const upload = (query: string, type = 'application/pdf', bytes = PDF) =>
    call(`${t.api}/media${query}`, { token, body: bytes, headers: { 'content-type': type } });

  it('When POST /media names the file %FF.pdf, ., .., con or NUL.txt, then 400 naming filename; a path is reduced to its base name', async () => {
    refused(await upload('?filename=%FF.pdf'), ['filename'], /must be valid UTF-8/);
    refused(await upload('?filename=%ED%A0%80.pdf'), ['filename'], /must be valid UTF-8/);
    refused(await upload('?filename=.'), ['filename'], /must not be \. or \.\./);
    refused(await upload('?filename=..'), ['filename'], /must not be \. or \.\./);
    refused(await upload('?filename=con'), ['filename'], /Windows device name/);
    refused(await upload('?filename=NUL.txt'), ['filename'], /Windows device name/);
    refused(await upload('?filename=a%00.pdf'), ['filename'], HIDDEN);
    refused(await upload('?filename=invoice%E2%80%AEfdp.exe'), ['filename'], /found U\+202E/);
    const reduced = await upload('?filename=..%2F..%2Freports%5Cmenu%20card.pdf');
    expect(reduced.status).to.equal(201);
    expect((reduced.body.data as { fileName: string }).fileName).to.equal('menu card.pdf');
    const arabic = await upload(`?filename=${encodeURIComponent('قائمة 🍕.pdf')}`);
    expect((arabic.body.data as { fileName: string }).fileName).to.equal('قائمة 🍕.pdf');
  });

  it('When Content-Type contradicts the bytes (text/html for a PDF, application/pdf for HTML or a PNG), then 400 naming Content-Type', async () => {
    const html = Buffer.from('<!doctype html><html><script>alert(1)</script></html>');
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d]);
    refused(
      await upload('?filename=menu.pdf', 'text/html'),
      ['Content-Type'],
      /its bytes are PDF \(application\/pdf\)/,
    );
    refused(
      await upload('?filename=menu.pdf', 'application/pdf', html),
      ['Content-Type'],
      /its bytes are HTML/,
    );
    refused(await upload('?filename=cat.pdf', 'application/pdf', png), ['Content-Type'], /its bytes are PNG/);
    // The type the bytes are, or a type that says nothing, is accepted.
    expect((await upload('?filename=menu.pdf', 'application/pdf')).status).to.equal(201);
    expect((await upload('?filename=cat.png', 'image/png', png)).status).to.equal(201);
    expect((await upload('?filename=menu.pdf', 'application/octet-stream')).status).to.equal(201);
  });

  it('When an attachment of a send has a file name to refuse, then 400 naming attachment.filename', async () => {
    const attachment = { type: 'document', base64: PDF.toString('base64') };
    for (const filename of ['con.pdf', '..', '\ufffd.pdf', 'a\u202e.pdf', 'x\ud800'])
      refused(
        await call(`${t.api}/send`, {
          token,
          json: { to: '15551234567', attachment: { ...attachment, filename } },
        }),
        ['attachment', 'filename'],
      );
  });

  it('When a proxy URL has broken percent-encoding (http://u:%ZZ@h:1), then 400 naming url, without repeating the URL', async () => {
    for (const url of ['http://u:%ZZ@h:1', 'http://u:secret%4@h:3128', 'socks5://us%er:secret@h:1080']) {
      const res = await adminCall(t, `/devices/${deviceId}/proxy`, { method: 'PUT', json: { url } });
      const message = refused(res, ['url'], /% that starts no escape/);
      expect(message).not.to.include('secret');
      expect(JSON.stringify(res.body)).not.to.include(url);
    }
    const good = await adminCall(t, `/devices/${deviceId}/proxy`, {
      method: 'PUT',
      json: { url: 'http://u:p%40ss@127.0.0.1:3128' },
    });
    expect(good.status).to.equal(200);
    expect(good.body.data).to.include({ hasCredentials: true, url: 'http://127.0.0.1:3128' });
    await adminCall(t, `/devices/${deviceId}/proxy`, { method: 'DELETE' });
  });
});
