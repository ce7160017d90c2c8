import http from 'node:http';
import { expect } from 'chai';
import { startCloudSim, type CloudSimHandle } from '../src/index.js';
import { NUMBER, USER } from './helpers.js';

const V = 'v21.0';

describe('cloud-sim: the Graph API over HTTP', function () {
  this.timeout(20_000);
  let sim: CloudSimHandle;

  const call = async (
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
    token: string | null = 'token-1',
  ) => {
    const response = await fetch(`${sim.url}${path}`, {
      method,
      headers: {
        ...(token === null ? {} : { authorization: `Bearer ${token}` }),
        ...(body === undefined || typeof body !== 'object' || body instanceof FormData
          ? {}
          : { 'content-type': 'application/json' }),
        ...headers,
      },
      ...(body === undefined
        ? {}
        : {
            body:
              typeof body === 'string' || body instanceof Buffer || body instanceof FormData
                ? body
                : JSON.stringify(body),
          }),
    });
    const text = await response.text();
    return { status: response.status, json: text ? JSON.parse(text) : undefined, headers: response.headers };
  };
  const send = (body: unknown, token?: string) => call('POST', `/${V}/1001/messages`, body, {}, token);
  const text = (to = USER, extra: object = {}) => ({
    messaging_product: 'whatsapp',
    to,
    type: 'text',
    text: { body: 'hello' },
    ...extra,
  });
  const template = (to = USER, name = 'verification_code') => ({
    messaging_product: 'whatsapp',
    to,
    type: 'template',
    template: {
      name,
      language: { code: 'en_US' },
      components: [{ type: 'body', parameters: [{ type: 'text', text: '123456' }] }],
    },
  });
  const upload = (bytes: Buffer, mime: string, product = 'whatsapp') => {
    const form = new FormData();
    form.set('messaging_product', product);
    form.set('type', mime);
    form.set('file', new Blob([bytes], { type: mime }), 'file.bin');
    return call('POST', `/${V}/1001/media`, form);
  };

  beforeEach(async () => {
    sim = await startCloudSim({
      numbers: [
        NUMBER,
        { ...NUMBER, id: '1002', wabaId: '2002', accessToken: 'token-2', appId: 'app-2', appSecret: 's2' },
      ],
      pairRate: { limit: 3, windowMs: 6000 },
      mediaLimits: { image: 5 * 1024 * 1024 },
    });
  });
  afterEach(async () => {
    await sim.close();
  });

  it('When the simulator starts, then it listens on 127.0.0.1 and a free port', () => {
    expect(sim.url).to.match(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  describe('auth', () => {
    it('When no Authorization header is sent, then 104 answers; a malformed or unknown token 190', async () => {
      const none = await call('GET', `/${V}/1001`, undefined, {}, null);
      expect([none.status, none.json.error.code]).to.deep.equal([401, 104]);
      const malformed = await call('GET', `/${V}/1001`, undefined, { authorization: 'Basic abc' }, null);
      expect([malformed.status, malformed.json.error.code]).to.deep.equal([401, 190]);
      const unknown = await call('GET', `/${V}/1001`, undefined, {}, 'nope');
      expect(unknown.json.error).to.include({ code: 190, type: 'OAuthException', error_subcode: 467 });
      expect(unknown.json.error.fbtrace_id).to.be.a('string');
    });

    it('When a token is expired by a control call, then 190 with subcode 463 answers', async () => {
      expect((await call('GET', `/${V}/1001`)).status).to.equal(200);
      const expire = await call('POST', '/control/tokens/expire', { token: 'token-1' }, {}, null);
      expect(expire.status).to.equal(200);
      const after = await call('GET', `/${V}/1001`);
      expect([after.status, after.json.error.code, after.json.error.error_subcode]).to.deep.equal([
        401, 190, 463,
      ]);
    });

    it('When a token asks for another number, then the object does not exist for it (100, subcode 33)', async () => {
      const other = await call('GET', `/${V}/1002`);
      expect([other.status, other.json.error.code, other.json.error.error_subcode]).to.deep.equal([
        400, 100, 33,
      ]);
    });

    it('When the path is not a Graph path, then 2500 answers', async () => {
      const bad = await call('GET', '/nope/1001');
      expect(bad.json.error.code).to.equal(2500);
    });
  });

  describe('GET /{phone-number-id}', () => {
    it('When fields are asked, then those fields and the id answer; without fields, the default set', async () => {
      const some = await call(
        'GET',
        `/${V}/1001?fields=quality_rating,messaging_limit_tier,verified_name,throughput`,
      );
      expect(some.json).to.deep.equal({
        quality_rating: 'GREEN',
        messaging_limit_tier: 'TIER_1K',
        verified_name: 'Test Shop',
        throughput: { level: 'STANDARD' },
        id: '1001',
      });
      const all = await call('GET', `/${V}/1001`);
      expect(all.json).to.include({
        display_phone_number: '+1 555-010-0001',
        platform_type: 'CLOUD_API',
        id: '1001',
      });
    });

    it('When a control call sets quality and tier, then the fields follow', async () => {
      const patch = await call('PATCH', '/control/numbers/1001', {
        qualityRating: 'RED',
        messagingLimitTier: 'TIER_10K',
      });
      expect(patch.status).to.equal(200);
      const fields = await call('GET', `/${V}/1001?fields=quality_rating,messaging_limit_tier`);
      expect(fields.json).to.include({ quality_rating: 'RED', messaging_limit_tier: 'TIER_10K' });
      expect((await call('PATCH', '/control/numbers/1001', { qualityRating: 'BLUE' })).status).to.equal(400);
    });

    it('When an unknown field is asked, then 100 names it', async () => {
      const bad = await call('GET', `/${V}/1001?fields=nope`);
      expect(bad.json.error.code).to.equal(100);
      expect(bad.json.error.message).to.include('(nope)');
    });
  });

  describe('POST /{phone-number-id}/messages', () => {
    it('When a template goes to a new user, then the answer names the contact and a wamid, and the control API shows it', async () => {
      const answer = await send(template('+1 555 010 2000'));
      expect(answer.status).to.equal(200);
      expect(answer.json.messaging_product).to.equal('whatsapp');
      expect(answer.json.contacts).to.deep.equal([{ input: '+1 555 010 2000', wa_id: USER }]);
      expect(answer.json.messages[0].id).to.match(/^wamid\./);
      const sent = await call('GET', '/control/messages?phoneNumberId=1001', undefined, {}, null);
      expect(sent.json).to.have.length(1);
      expect(sent.json[0]).to.include({ id: answer.json.messages[0].id, type: 'template', status: 'sent' });
    });

    it('When free-form goes with no window, then 131047; after the user writes it goes; 24 h later 131047 again', async () => {
      const refused = await send(text());
      expect([refused.status, refused.json.error.code]).to.deep.equal([400, 131047]);
      expect(refused.json.error.error_data.details).to.include('24 hours');
      const inbound = await call(
        'POST',
        '/control/numbers/1001/inbound',
        { from: USER, text: 'hi' },
        {},
        null,
      );
      expect(inbound.json.id).to.match(/^wamid\./);
      expect((await send(text(USER, { context: { message_id: inbound.json.id } }))).status).to.equal(200);
      for (const kind of [
        { type: 'reaction', reaction: { message_id: inbound.json.id, emoji: '👍' } },
        { type: 'location', location: { latitude: 52.5, longitude: 13.4 } },
        { type: 'contacts', contacts: [{ name: { formatted_name: 'Ann' } }] },
        { type: 'image', image: { link: 'https://example.test/a.png', caption: 'c' } },
      ]) {
        // Past the pair rate's window (3 per 6 s here) before each, so only the window is at stake.
        await call('POST', '/control/clock', { advanceMs: 6000 }, {}, null);
        expect((await send({ messaging_product: 'whatsapp', to: USER, ...kind })).status, kind.type).to.equal(
          200,
        );
      }
      await call('POST', '/control/clock', { advanceMs: 24 * 3600_000 }, {}, null);
      expect((await send(text())).json.error.code).to.equal(131047);
      expect((await send(template())).status).to.equal(200);
    });

    it('When a field is missing or wrong, then 100 answers with details naming it', async () => {
      const missing = await send({ messaging_product: 'whatsapp', to: USER, type: 'text', text: {} });
      expect([missing.status, missing.json.error.code]).to.deep.equal([400, 100]);
      expect(missing.json.error.error_data).to.deep.equal({
        messaging_product: 'whatsapp',
        details: "The parameter text['body'] is required.",
      });
    });

    it('When the template is missing or paused, then 132001 and 132015', async () => {
      expect((await send(template(USER, 'nope'))).json.error.code).to.equal(132001);
      const pause = await call(
        'POST',
        '/control/templates/status',
        { wabaId: '2001', name: 'verification_code', language: 'en_US', status: 'PAUSED' },
        {},
        null,
      );
      expect(pause.status).to.equal(200);
      expect((await send(template())).json.error.code).to.equal(132015);
    });

    it('When one user gets more than the pair rate, then 131056 with HTTP 429', async () => {
      for (let i = 0; i < 3; i++) expect((await send(template())).status).to.equal(200);
      const limited = await send(template());
      expect([limited.status, limited.json.error.code]).to.deep.equal([429, 131056]);
    });

    it("When more than the number's messages per second go, then 130429 with HTTP 429", async () => {
      await call('PATCH', '/control/numbers/1001', { throughputPerSecond: 2 }, {}, null);
      expect((await send(template('15550103001'))).status).to.equal(200);
      expect((await send(template('15550103002'))).status).to.equal(200);
      const limited = await send(template('15550103003'));
      expect([limited.status, limited.json.error.code]).to.deep.equal([429, 130429]);
    });

    it("When new users pass the tier's limit in 24 h, then 131048", async () => {
      await call(
        'PATCH',
        '/control/numbers/1001',
        { messagingLimitTier: 'TIER_50', throughputPerSecond: 1000 },
        {},
        null,
      );
      for (let i = 0; i < 50; i++)
        expect((await send(template(`155501040${String(i).padStart(2, '0')}`))).status).to.equal(200);
      expect((await send(template('15550105000'))).json.error.code).to.equal(131048);
    });

    it('When the body is not JSON, not UTF-8, of the wrong type or too large, then it is refused and the server stays up', async () => {
      const invalid = await call('POST', `/${V}/1001/messages`, '{"messaging_product":', {
        'content-type': 'application/json',
      });
      expect([invalid.status, invalid.json.error.error_data.details]).to.deep.equal([
        400,
        'The request body is not valid JSON.',
      ]);
      const bytes = Buffer.concat([
        Buffer.from('{"messaging_product":"whatsapp","to":"1","text":{"body":"'),
        Buffer.from([0xff, 0xfe]),
        Buffer.from('"}}'),
      ]);
      const notUtf8 = await call('POST', `/${V}/1001/messages`, bytes, {
        'content-type': 'application/json',
      });
      expect(notUtf8.json.error.error_data.details).to.equal('The request body is not valid UTF-8.');
      const form = await call('POST', `/${V}/1001/messages`, 'to=1', {
        'content-type': 'application/x-www-form-urlencoded',
      });
      expect(form.json.error.error_data.details).to.include('application/json');
      const huge = await call(
        'POST',
        `/${V}/1001/messages`,
        JSON.stringify({ pad: 'x'.repeat(300 * 1024) }),
        {
          'content-type': 'application/json',
        },
      );
      expect([huge.status, huge.json.error.code]).to.deep.equal([413, 100]);
      const surrogate = await call(
        'POST',
        `/${V}/1001/messages`,
        '{"messaging_product":"whatsapp","to":"15550102000","type":"template","template":{"name":"\\ud800","language":{"code":"en_US"}}}',
        { 'content-type': 'application/json' },
      );
      expect(surrogate.json.error.error_data.details).to.include('not valid Unicode');
      expect((await call('GET', `/${V}/1001`)).status).to.equal(200);
    });

    it('When a huge body streams without a length, then the server answers 413 and cuts it short', async () => {
      const { port } = new URL(sim.url);
      const status = await new Promise<number>((resolve, reject) => {
        const req = http.request(
          {
            host: '127.0.0.1',
            port,
            method: 'POST',
            path: `/${V}/1001/messages`,
            headers: { authorization: 'Bearer token-1', 'content-type': 'application/json' },
          },
          (res) => {
            res.resume();
            resolve(res.statusCode!);
          },
        );
        req.on('error', reject);
        const chunk = Buffer.alloc(64 * 1024, 0x20);
        let sent = 0;
        const pump = () => {
          while (sent < 8 * 1024 * 1024) {
            sent += chunk.length;
            if (!req.write(chunk)) return void req.once('drain', pump);
          }
          req.end();
        };
        pump();
      });
      expect(status).to.equal(413);
    });
  });

  describe('media', () => {
    it('When an image is uploaded, then its id answers and GET gives url, mime type, sha256 and size; the url serves it', async () => {
      const bytes = Buffer.from('\x89PNG fake image bytes', 'latin1');
      const up = await upload(bytes, 'image/png');
      expect(up.status).to.equal(200);
      expect(up.json.id).to.match(/^\d+$/);
      const info = await call('GET', `/${V}/${up.json.id}`);
      expect(info.json).to.include({
        messaging_product: 'whatsapp',
        mime_type: 'image/png',
        file_size: bytes.length,
        id: up.json.id,
      });
      expect(info.json.sha256).to.equal(
        (await import('node:crypto')).createHash('sha256').update(bytes).digest('hex'),
      );
      const download = await fetch(info.json.url, { headers: { authorization: 'Bearer token-1' } });
      expect(Buffer.from(await download.arrayBuffer())).to.deep.equal(bytes);
      expect((await fetch(info.json.url)).status).to.equal(401);
      expect((await call('GET', `/${V}/${up.json.id}`, undefined, {}, 'token-2')).json.error.code).to.equal(
        100,
      );
      await call('POST', '/control/numbers/1001/inbound', { from: USER, text: 'hi' }, {}, null);
      expect(
        (await send({ messaging_product: 'whatsapp', to: USER, type: 'image', image: { id: up.json.id } }))
          .status,
      ).to.equal(200);
      expect(
        (await send({ messaging_product: 'whatsapp', to: USER, type: 'image', image: { id: '999' } })).json
          .error.code,
      ).to.equal(100);
    });

    it('When an image is over 5 MB, of an unlisted type, or the form lacks a field, then it is refused', async () => {
      const big = await upload(Buffer.alloc(5 * 1024 * 1024 + 1), 'image/png');
      expect(big.json.error.code).to.equal(131053);
      expect((await upload(Buffer.from('x'), 'application/x-msdownload')).json.error.code).to.equal(100);
      expect((await upload(Buffer.from('x'), 'image/png', 'sms')).json.error.code).to.equal(100);
      const notForm = await call('POST', `/${V}/1001/media`, { file: 'x' });
      expect(notForm.json.error.error_data.details).to.include('multipart');
    });
  });

  describe('GET /{waba-id}/message_templates', () => {
    it("When listed, then the WABA's templates answer, the authentication one with its copy-code button", async () => {
      const list = await call('GET', `/${V}/2001/message_templates`);
      expect(list.status).to.equal(200);
      const otp = list.json.data.find((t: { name: string }) => t.name === 'verification_code');
      expect(otp).to.include({ language: 'en_US', status: 'APPROVED', category: 'AUTHENTICATION' });
      expect(otp.components.find((c: { type: string }) => c.type === 'BUTTONS').buttons[0]).to.include({
        otp_type: 'COPY_CODE',
      });
      expect((await call('GET', `/${V}/2002/message_templates`)).json.error.code).to.equal(100);
    });

    it('When a control call adds a template, then it is listed, filtered and paged', async () => {
      const added = await call(
        'POST',
        '/control/templates',
        {
          wabaId: '2001',
          name: 'promo',
          language: 'de',
          category: 'MARKETING',
          components: [{ type: 'BODY', text: 'Hallo' }],
        },
        {},
        null,
      );
      expect(added.status).to.equal(201);
      const marketing = await call('GET', `/${V}/2001/message_templates?category=MARKETING`);
      expect(marketing.json.data.map((t: { name: string }) => t.name)).to.deep.equal(['promo']);
      const first = await call('GET', `/${V}/2001/message_templates?limit=2`);
      expect(first.json.data).to.have.length(2);
      const rest = await call(
        'GET',
        `/${V}/2001/message_templates?limit=2&after=${first.json.paging.cursors.after}`,
      );
      expect(rest.json.data.map((t: { name: string }) => t.name)).to.deep.equal(['promo']);
      expect(
        (
          await call(
            'POST',
            '/control/templates',
            { wabaId: '2001', name: 'x', language: 'en', category: 'NOPE', components: [] },
            {},
            null,
          )
        ).status,
      ).to.equal(400);
    });
  });
});
