import { expect } from 'chai';
import { call, createToken, freshDeviceId, markConnected, startApi, type TestApi } from './helpers/api.js';

function rateHeaders(res: { headers: Headers }) {
  return {
    limit: res.headers.get('x-ratelimit-limit'),
    remaining: res.headers.get('x-ratelimit-remaining'),
    reset: res.headers.get('x-ratelimit-reset'),
  };
}

describe('per-token rate limits', () => {
  let t: TestApi;
  before(
    async () =>
      (t = await startApi({
        rateLimitWindowMs: 60_000,
        rateLimits: { connect: 2, disconnect: 2, status: 3, send: 2, otp: 2, messages: 2 },
      })),
  );
  after(async () => t.close());

  it('When a token goes over its /status limit, then 429 with resetIn, and every response carries the three headers', async () => {
    const token = await createToken(t);
    const before = Math.floor(Date.now() / 1000);
    const responses = [];
    for (let i = 0; i < 4; i++) responses.push(await call(`${t.api}/status`, { token }));

    expect(responses.map((r) => r.status)).to.deep.equal([200, 200, 200, 429]);
    expect(responses.map((r) => rateHeaders(r).limit)).to.deep.equal(['3', '3', '3', '3']);
    expect(responses.map((r) => rateHeaders(r).remaining)).to.deep.equal(['2', '1', '0', '0']);
    for (const r of responses) {
      // Unix time in seconds at which the window ends.
      expect(Number(rateHeaders(r).reset)).to.be.within(before + 1, before + 61);
    }
    const limited = responses[3]!;
    expect(limited.body).to.have.keys('success', 'error', 'resetIn');
    expect(limited.body.success).to.equal(false);
    expect(limited.body.error).to.equal('Rate limit exceeded');
    expect(limited.body.resetIn).to.be.a('number').and.satisfy(Number.isInteger).and.within(1, 60);
    const metrics = await t.services.metrics.registry.getSingleMetricAsString(
      'mgw_rate_limit_rejections_total',
    );
    expect(metrics).to.match(/endpoint="status"\} 1/);
  });

  it('When one token is limited, then another token and another endpoint are not', async () => {
    const a = await createToken(t);
    const b = await createToken(t);
    for (let i = 0; i < 4; i++) await call(`${t.api}/status`, { token: a });
    const otherToken = await call(`${t.api}/status`, { token: b });
    const otherEndpoint = await call(`${t.api}/messages/x`, { token: a });
    expect(otherToken.status).to.equal(200);
    expect(otherEndpoint.status).to.equal(404);
    expect(rateHeaders(otherEndpoint).limit).to.equal('2');
  });

  it('When a request fails validation or finds no device, then it still counts and still carries the headers', async () => {
    const deviceId = freshDeviceId();
    const token = await createToken(t, { deviceId });
    const invalid = await call(`${t.api}/send`, { token, json: { to: 'x' } });
    const noDevice = await call(`${t.api}/send`, { token, json: { to: '15551234567', text: 'x' } });
    await markConnected(t.redis, deviceId);
    const limited = await call(`${t.api}/send`, { token, json: { to: '15551234567', text: 'x' } });
    expect([invalid.status, noDevice.status, limited.status]).to.deep.equal([400, 409, 429]);
    expect([invalid, noDevice, limited].map((r) => rateHeaders(r).remaining)).to.deep.equal(['1', '0', '0']);
  });

  it('When each endpoint is called, then it reports its own configured limit', async () => {
    const token = await createToken(t);
    const connect = await call(`${t.api}/connect?method=bogus`, { token });
    const disconnect = await call(`${t.api}/disconnect?x=1`, { token, method: 'POST' });
    const otp = await call(`${t.api}/otp`, { token, json: {} });
    expect([connect, disconnect, otp].map((r) => r.status)).to.deep.equal([400, 400, 400]);
    expect([connect, disconnect, otp].map((r) => rateHeaders(r).limit)).to.deep.equal(['2', '2', '2']);
  });

  it('When the limiter keys are stored, then they hold the token hash, never the token', async () => {
    const token = await createToken(t);
    await call(`${t.api}/status`, { token });
    const rlKeys = await t.redis.keys('mgw:rl:*');
    expect(rlKeys.length).to.be.greaterThan(0);
    expect(rlKeys.some((k) => k.includes(token))).to.equal(false);
  });
});

describe('default rate limits', () => {
  it('When nothing is configured, then the spec limits apply: connect 15, disconnect 5, status 20, send 30, otp 10', async () => {
    const t = await startApi();
    try {
      const token = await createToken(t);
      const statuses = await Promise.all([
        call(`${t.api}/connect?method=bogus`, { token }),
        call(`${t.api}/disconnect?x=1`, { token, method: 'POST' }),
        call(`${t.api}/status`, { token }),
        call(`${t.api}/send`, { token, json: {} }),
        call(`${t.api}/otp`, { token, json: {} }),
      ]);
      expect(statuses.map((r) => rateHeaders(r).limit)).to.deep.equal(['15', '5', '20', '30', '10']);
    } finally {
      await t.close();
    }
  });
});
