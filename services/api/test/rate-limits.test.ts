import { expect } from 'chai';
import { keys } from '@mgw/contracts';
import { hashToken } from '@mgw/store';
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
        rateLimits: { connect: 2, disconnect: 2, status: 3, send: 2, otp: 2, messages: 2, contacts: 4 },
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
    const contacts = await call(`${t.api}/contacts/check`, { token, json: { phones: [] } });
    expect([connect, disconnect, otp, contacts].map((r) => r.status)).to.deep.equal([400, 400, 400, 400]);
    expect([connect, disconnect, otp, contacts].map((r) => rateHeaders(r).limit)).to.deep.equal([
      '2',
      '2',
      '2',
      '4',
    ]);
  });

  it('When the limiter keys are stored, then they hold the token hash, never the token', async () => {
    const token = await createToken(t);
    await call(`${t.api}/status`, { token });
    const rlKeys = await t.redis.keys('mgw:rl:*');
    expect(rlKeys.length).to.be.greaterThan(0);
    expect(rlKeys.some((k) => k.includes(token))).to.equal(false);
  });
});

describe('the /send limit of a busy token (hits admitted ahead of Redis)', () => {
  const limit = 40;
  const apis: TestApi[] = [];
  before(async () => {
    // Two replicas sharing one Redis.
    for (let i = 0; i < 2; i++)
      apis.push(await startApi({ rateLimitWindowMs: 60_000, rateLimits: { send: limit } }));
  });
  after(async () => Promise.all(apis.map((a) => a.close())));

  const send = (api: TestApi, token: string) =>
    call(`${api.api}/send`, { token, json: { to: '15551234567', text: 'hi' } });

  it('When a token sends through two replicas one request at a time, then exactly the limit gets past the limiter, and Redis counts every request', async () => {
    const deviceId = freshDeviceId();
    const token = await createToken(apis[0]!, { deviceId });
    await markConnected(apis[0]!.redis, deviceId);
    const statuses: number[] = [];
    for (let i = 0; i < limit + 10; i++) statuses.push((await send(apis[i % 2]!, token)).status);
    expect(statuses.filter((s) => s === 202)).to.have.length(limit);
    expect(statuses.slice(limit)).to.deep.equal(Array(10).fill(429));
    await new Promise((r) => setTimeout(r, 50));
    const counter = keys.rateLimitPrefix('send') + hashToken(token);
    expect(Number(await apis[0]!.redis.get(counter))).to.equal(limit + 10);
  });

  it('When a token sends a burst through two replicas at once, then the limit is accepted, over it by at most the half a replica may admit ahead (docs/api.md, Rate limits), and Redis counts every request', async () => {
    const deviceId = freshDeviceId();
    const token = await createToken(apis[0]!, { deviceId });
    await markConnected(apis[0]!.redis, deviceId);
    await send(apis[0]!, token);
    const burst = await Promise.all(Array.from({ length: limit + 20 }, (_, i) => send(apis[i % 2]!, token)));
    const accepted = burst.filter((r) => r.status === 202).length;
    // Every hit Redis counted within the limit is accepted; a replica counting ahead has not yet
    // seen the other's hits of the last moments, and may admit up to half the limit on its count.
    expect(accepted).to.be.within(limit - 1, limit - 1 + limit / 2);
    expect(burst.filter((r) => r.status === 429)).to.have.length(limit + 20 - accepted);
    await new Promise((r) => setTimeout(r, 50));
    const counter = keys.rateLimitPrefix('send') + hashToken(token);
    expect(Number(await apis[0]!.redis.get(counter))).to.equal(limit + 21);
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
