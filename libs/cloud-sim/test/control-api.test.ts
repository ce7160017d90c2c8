import { expect } from 'chai';
import { startCloudSim, type CloudSimHandle } from '../src/index.js';
import { NUMBER } from './helpers.js';

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

  it('When a control body is huge, then 413 answers', async () => {
    expect(
      (await control('POST', '/numbers', JSON.stringify({ pad: 'x'.repeat(300 * 1024) }))).status,
    ).to.equal(413);
  });
});
