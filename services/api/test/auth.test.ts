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
  const failKey = keys.rateLimitPrefix('auth-failures') + '127.0.0.1';
  before(async () => {
    t = await startApi({ authFailureLimit: 3, authFailureWindowMs: 60_000 });
    await t.redis.del(failKey);
  });
  after(async () => {
    await t.redis.del(failKey);
    await t.close();
  });

  it('When an IP fails authentication too often, then 429 with resetIn, even with a valid token', async () => {
    const token = await createToken(t);
    const failures = [];
    for (let i = 0; i < 3; i++) failures.push(await call(`${t.api}/status`, { token: `guess-${i}` }));
    const blocked = await call(`${t.api}/status`, { token });

    expect(failures.map((r) => r.status)).to.deep.equal([401, 401, 401]);
    expect(failures.map((r) => r.headers.get('x-ratelimit-remaining'))).to.deep.equal(['2', '1', '0']);
    expect(blocked.status).to.equal(429);
    expect(blocked.body).to.have.keys('success', 'error', 'resetIn');
    expect(blocked.body.success).to.equal(false);
    expect(blocked.body.error).to.equal('Too many failed authentication attempts');
    expect(blocked.body.resetIn).to.be.a('number').within(1, 60);
    expect(blocked.headers.get('x-ratelimit-limit')).to.equal('3');
    const metrics = await t.services.metrics.registry.getSingleMetricAsString('mgw_auth_rejections_total');
    expect(metrics).to.match(/reason="blocked"\} 1/);
    expect(metrics).to.match(/reason="invalid"\} 3/);
  });
});
