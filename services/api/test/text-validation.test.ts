import { expect } from 'chai';
import { ERRORS } from '@mgw/contracts';
import {
  call,
  createToken,
  freshDeviceId,
  markConnected,
  type JsonResponse,
  type TestApi,
} from './helpers/api.js';
import { adminCall, startAdminApi } from './helpers/admin.js';

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
