import { expect } from 'chai';
import { keys } from '@mgw/contracts';
import { call, createToken, freshDeviceId, markConnected, startApi, type TestApi } from './helpers/api.js';

const INVALID = { success: false, error: 'Invalid API token' };

describe('API authentication', () => {
  let t: TestApi;
  before(async () => (t = await startApi()));
  after(async () => t.close());

  it('When no token is sent, then 401 Invalid API token', async () => {
    const res = await call(`${t.api}/status`);
    expect(res.status).to.equal(401);
    expect(res.body).to.deep.equal(INVALID);
  });

  it('When an unknown token is sent as Bearer or as ?token=, then 401 Invalid API token', async () => {
    const bearer = await call(`${t.api}/status`, { token: 'mgw_not-a-real-token' });
    const query = await call(`${t.api}/status`, { token: 'mgw_not-a-real-token', tokenInQuery: true });
    expect([bearer.status, query.status]).to.deep.equal([401, 401]);
    expect(bearer.body).to.deep.equal(INVALID);
    expect(query.body).to.deep.equal(INVALID);
  });

  it('When the Authorization header is not a Bearer token, then 401', async () => {
    const token = await createToken(t);
    const res = await call(`${t.api}/status`, { headers: { authorization: `Basic ${token}` } });
    expect(res.status).to.equal(401);
    expect(res.body).to.deep.equal(INVALID);
  });

  it('When a valid token is sent as Bearer or as ?token=, then the request is served', async () => {
    const token = await createToken(t);
    const bearer = await call(`${t.api}/status`, { token });
    const query = await call(`${t.api}/status`, { token, tokenInQuery: true });
    expect(bearer.status).to.equal(200);
    expect(query.status).to.equal(200);
  });

  it('When a token was revoked, then 401', async () => {
    const { value, token } = await t.services.tokens.create({ name: 'to-revoke' });
    expect((await call(`${t.api}/status`, { token: value })).status).to.equal(200);
    await t.services.tokens.revoke(token.id);
    const res = await call(`${t.api}/status`, { token: value });
    expect(res.status).to.equal(401);
    expect(res.body).to.deep.equal(INVALID);
  });

  it('When a token has expired, then 401 and the rejection is counted as expired', async () => {
    const { value } = await t.services.tokens.create({
      name: 'old',
      expiresInMs: 1000,
      now: new Date(Date.now() - 60_000),
    });
    const res = await call(`${t.api}/status`, { token: value, tokenInQuery: true });
    expect(res.status).to.equal(401);
    expect(res.body).to.deep.equal(INVALID);
    const metrics = await t.services.metrics.registry.getSingleMetricAsString('mgw_auth_rejections_total');
    expect(metrics).to.match(/mgw_auth_rejections_total\{reason="expired"\} [1-9]/);
  });

  it('When an unknown path under the API is called without a token, then 401; with one, then 404', async () => {
    const token = await createToken(t);
    const anonymous = await call(`${t.api}/nope`);
    const authed = await call(`${t.api}/nope`, { token });
    expect(anonymous.status).to.equal(401);
    expect(authed.status).to.equal(404);
    expect(authed.body).to.deep.equal({ success: false, error: 'Not found' });
  });

  it('When the token is bad, then auth runs before validation (401, not 400)', async () => {
    const res = await call(`${t.api}/send`, {
      token: 'wrong',
      body: '{not json',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).to.equal(401);
  });

  it('When a token is linked to a device, then it acts on that device; an unlinked token acts on the default device', async () => {
    const deviceId = freshDeviceId();
    await markConnected(t.redis, deviceId);
    const linked = await createToken(t, { deviceId });
    const unlinked = await createToken(t);
    await t.redis.del(keys.session(t.config.defaultDeviceId));

    const linkedStatus = await call(`${t.api}/status`, { token: linked });
    const unlinkedStatus = await call(`${t.api}/status`, { token: unlinked });
    const sent = await call(`${t.api}/send`, { token: linked, json: { to: '15551234567', text: 'hi' } });

    expect(linkedStatus.body.status).to.equal('connected');
    expect(unlinkedStatus.body).to.deep.equal({ success: true, status: 'disconnected' });
    expect(sent.status).to.equal(202);
    const record = await t.services.messages.get(deviceId, String(sent.body.messageId));
    expect(record?.deviceId).to.equal(deviceId);
  });
});

describe('API authentication failure guard', () => {
  let t: TestApi;
  let token: string;
  const failKey = keys.rateLimitPrefix('auth-failures') + '127.0.0.1';
  before(async () => {
    t = await startApi({ authFailureLimit: 3, authFailureWindowMs: 60_000 });
    token = await createToken(t);
  });
  beforeEach(async () => t.redis.del(failKey));
  after(async () => {
    await t.redis.del(failKey);
    await t.close();
  });
  const rejections = async () =>
    (await t.services.metrics.registry.getMetricsAsJSON()).find(
      (m) => m.name === 'mgw_auth_rejections_total',
    )!.values as { labels: { reason?: string }; value: number }[];
  const count = async (reason: string) =>
    (await rejections()).find((v) => v.labels.reason === reason)?.value ?? 0;

  it('When an IP presents wrong tokens too often, then wrong tokens get 429 with resetIn, while a valid token from it is still served', async () => {
    const [invalidBefore, blockedBefore] = [await count('invalid'), await count('blocked')];
    const failures = [];
    for (let i = 0; i < 3; i++) failures.push(await call(`${t.api}/status`, { token: `guess-${i}` }));
    const blocked = await call(`${t.api}/status`, { token: 'guess-3' });
    const valid = await call(`${t.api}/status`, { token });

    expect(failures.map((r) => r.status)).to.deep.equal([401, 401, 401]);
    expect(failures.map((r) => r.headers.get('x-ratelimit-remaining'))).to.deep.equal(['2', '1', '0']);
    expect(blocked.status).to.equal(429);
    expect(blocked.body).to.have.keys('success', 'error', 'resetIn');
    expect(blocked.body.success).to.equal(false);
    expect(blocked.body.error).to.equal('Too many failed authentication attempts');
    expect(blocked.body.resetIn).to.be.a('number').within(1, 60);
    expect(blocked.headers.get('x-ratelimit-limit')).to.equal('3');
    expect(valid.status, 'a valid token is never refused').to.equal(200);
    expect(await count('invalid')).to.equal(invalidBefore + 3);
    expect(await count('blocked')).to.equal(blockedBefore + 1);
  });

  it('When 40 requests come without any token, then each is a plain 401 and none counts against the IP', async () => {
    const missingBefore = await count('missing');
    const anonymous = [];
    for (let i = 0; i < 40; i++) anonymous.push(await call(`${t.api}/status`));
    const valid = await call(`${t.api}/status`, { token });
    const wrong = await call(`${t.api}/status`, { token: 'guess' });

    expect(new Set(anonymous.map((r) => r.status))).to.deep.equal(new Set([401]));
    expect(anonymous[0]!.headers.get('x-ratelimit-remaining'), 'no guard headers').to.equal(null);
    expect(valid.status).to.equal(200);
    expect(wrong.status).to.equal(401);
    expect(wrong.headers.get('x-ratelimit-remaining'), 'the first counted failure').to.equal('2');
    expect(await count('missing')).to.equal(missingBefore + 40);
  });

  it('When CORS preflights (OPTIONS) come, even with a wrong ?token=, then 401 and nothing is counted', async () => {
    for (let i = 0; i < 5; i++) {
      const preflight = await call(`${t.api}/send?token=wrong-${i}`, {
        method: 'OPTIONS',
        headers: { origin: 'https://shop.example', 'access-control-request-method': 'POST' },
      });
      expect(preflight.status).to.equal(401);
    }
    expect(await t.redis.get(failKey)).to.equal(null);
    expect((await call(`${t.api}/status`, { token: 'guess' })).headers.get('x-ratelimit-remaining')).to.equal(
      '2',
    );
  });
});
