import { expect } from 'chai';
import { startCloudSim, type CloudSimHandle } from '../src/index.js';
import { NUMBER, USER, startReceiver, until } from './helpers.js';

describe('cloud-sim: the control API over HTTP', function () {
  this.timeout(20_000);
  let sim: CloudSimHandle;
  const control = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${sim.url}/control${path}`, {
      method,
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
  };

  beforeEach(async () => {
    sim = await startCloudSim();
  });
  afterEach(async () => {
    await sim.close();
  });

  it('When a number is added, then its token reaches it over the Graph API; a duplicate is refused', async () => {
    expect((await control('POST', '/numbers', NUMBER)).status).to.equal(201);
    expect((await control('POST', '/numbers', NUMBER)).status).to.equal(409);
    const fields = await fetch(`${sim.url}/v21.0/1001?fields=verified_name`, {
      headers: { authorization: 'Bearer token-1' },
    });
    expect(await fields.json()).to.deep.equal({ verified_name: 'Test Shop', id: '1001' });
  });

  it('When a control body is not JSON, not an object, or names nothing known, then 400 or 404 answers', async () => {
    expect((await control('POST', '/numbers', '{')).status).to.equal(400);
    expect((await control('POST', '/numbers', '[]')).status).to.equal(400);
    expect((await control('POST', '/numbers', { id: 'x' })).status).to.equal(400);
    expect((await control('PATCH', '/numbers/42', { qualityRating: 'RED' })).status).to.equal(404);
    expect((await control('POST', '/tokens/expire', { token: 'nope' })).status).to.equal(404);
    expect((await control('POST', '/messages/wamid.nope/status', { status: 'read' })).status).to.equal(404);
    expect((await control('POST', '/numbers/42/inbound', { from: '155501020', text: 'x' })).status).to.equal(
      404,
    );
    expect((await control('GET', '/nowhere')).status).to.equal(404);
    expect((await control('POST', '/clock', { advanceMs: -1 })).status).to.equal(400);
    expect(
      (
        await control('POST', '/webhooks', {
          appId: 'nope',
          callbackUrl: 'http://127.0.0.1:1/',
          verifyToken: 'v',
        })
      ).status,
    ).to.equal(404);
  });

  it('When a test asks for a webhook form, then the signed body reaches the callback and the user file is fetchable by the business token', async () => {
    expect((await control('POST', '/numbers', NUMBER)).status).to.equal(201);
    const forms = (await control('GET', '/forms')).json as unknown as { name: string; reference: string }[];
    expect(forms.map((f) => f.name)).to.include.members([
      'message.image',
      'status.failed',
      'field.account_update',
    ]);
    const receiver = await startReceiver({ verifyToken: 'v', appSecret: 'secret-1' });
    try {
      expect(
        (await control('POST', '/webhooks', { appId: 'app-1', callbackUrl: receiver.url, verifyToken: 'v' }))
          .status,
      ).to.equal(200);
      const delivered = await control('POST', '/numbers/1001/forms/message.image', {
        from: USER,
        name: 'Ann',
      });
      expect(delivered.status).to.equal(200);
      const { bodies, messageIds, files } = delivered.json as {
        bodies: unknown[];
        messageIds: string[];
        files: { id: string; mimeType: string; bytes: string }[];
      };
      const posted = await until(() => receiver.posts()[0], 5_000, 'the form');
      expect(posted.signed).to.equal(true);
      expect(JSON.parse(posted.body)).to.deep.equal(bodies[0]);
      expect(posted.body).to.contain(messageIds[0]);
      const meta = await fetch(`${sim.url}/v21.0/${files[0]!.id}`, {
        headers: { authorization: 'Bearer token-1' },
      });
      const { url, mime_type: mime } = (await meta.json()) as { url: string; mime_type: string };
      expect(mime).to.equal('image/jpeg');
      const file = await fetch(url, { headers: { authorization: 'Bearer token-1' } });
      expect(Buffer.from(await file.arrayBuffer()).toString('base64')).to.equal(files[0]!.bytes);
      expect((await control('POST', '/numbers/1001/forms/message.nope', {})).status).to.equal(404);
    } finally {
      await receiver.close();
    }
  });

  it('When a control body is huge, then 413 answers', async () => {
    expect(
      (await control('POST', '/numbers', JSON.stringify({ pad: 'x'.repeat(300 * 1024) }))).status,
    ).to.equal(413);
  });
});
