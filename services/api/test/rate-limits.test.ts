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
    // The window starts at the first hit, which a loaded machine may make a second or more later.
    let firstAnswered = 0;
    for (let i = 0; i < 4; i++) {
      responses.push(await call(`${t.api}/status`, { token }));
      firstAnswered ||= Math.ceil(Date.now() / 1000);
    }

    expect(responses.map((r) => r.status)).to.deep.equal([200, 200, 200, 429]);
    expect(responses.map((r) => rateHeaders(r).limit)).to.deep.equal(['3', '3', '3', '3']);
    expect(responses.map((r) => rateHeaders(r).remaining)).to.deep.equal(['2', '1', '0', '0']);
    for (const r of responses) {
      // Unix time in seconds at which the window ends.
      expect(Number(rateHeaders(r).reset)).to.be.within(before + 1, firstAnswered + 60);
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

describe('the /send limit across API replicas (counted by the accept script that writes the messages)', () => {
  const limit = 40;
  const apis: TestApi[] = [];
  before(async () => {
    // Two replicas sharing one Redis.
    for (let i = 0; i < 2; i++)
      apis.push(await startApi({ rateLimitWindowMs: 60_000, rateLimits: { send: limit } }));
  });
  after(async () => Promise.all(apis.map((a) => a.close())));

  const send = (api: TestApi, token: string, to: string | string[] = '15551234567') =>
    call(`${api.api}/send`, { token, json: { to, text: 'hi' } });
  /** Messages the device's queue holds: only accepted requests wrote any. */
  const queued = async (deviceId: string) =>
    (await apis[0]!.services.acceptor.queue(deviceId).getJobCounts('prioritized', 'wait')).prioritized;

  it('When a token sends through two replicas one request at a time, then exactly the limit is accepted, and Redis counts every request in the device slot', async () => {
    const deviceId = freshDeviceId();
    const token = await createToken(apis[0]!, { deviceId });
    await markConnected(apis[0]!.redis, deviceId);
    const responses = [];
    for (let i = 0; i < limit + 10; i++) responses.push(await send(apis[i % 2]!, token));
    expect(responses.map((r) => r.status).filter((s) => s === 202)).to.have.length(limit);
    expect(responses.slice(limit).map((r) => r.status)).to.deep.equal(Array(10).fill(429));
    expect(responses.map((r) => rateHeaders(r).remaining)).to.deep.equal([
      ...Array.from({ length: limit }, (_, i) => String(limit - 1 - i)),
      ...Array(10).fill('0'),
    ]);
    expect(responses[limit]!.body).to.deep.include({ success: false, error: 'Rate limit exceeded' });
    const counter = keys.sendRateLimit(deviceId, hashToken(token));
    expect(Number(await apis[0]!.redis.get(counter))).to.equal(limit + 10);
    expect(await queued(deviceId)).to.equal(limit);
  });

  it('When a token hammers two replicas concurrently, then exactly the limit is accepted (decided on Redis count, no replica admits past it), nothing refused is written, and Redis counts every request', async () => {
    const deviceId = freshDeviceId();
    const token = await createToken(apis[0]!, { deviceId });
    await markConnected(apis[0]!.redis, deviceId);
    // Three waves, each more than the limit at once, half through each replica: requests of one
    // replica share accept calls, some admitted and some refused in the same one.
    const statuses: number[] = [];
    let acceptedMessages = 0;
    for (let wave = 0; wave < 3; wave++) {
      // A few lists among them: a list is one hit too.
      const to = (i: number) => (i % 7 === 3 ? ['15551230001', '15551230002'] : '15551234567');
      const burst = await Promise.all(
        Array.from({ length: limit + 10 }, (_, i) => send(apis[i % 2]!, token, to(i))),
      );
      burst.forEach((r, i) => {
        expect(r.status, JSON.stringify(r.body)).to.be.oneOf([202, 429]);
        statuses.push(r.status);
        if (r.status === 202) acceptedMessages += [to(i)].flat().length;
      });
    }
    expect(statuses.filter((s) => s === 202)).to.have.length(limit);
    expect(statuses.filter((s) => s === 429)).to.have.length(3 * (limit + 10) - limit);
    const counter = keys.sendRateLimit(deviceId, hashToken(token));
    expect(Number(await apis[0]!.redis.get(counter))).to.equal(3 * (limit + 10));
    // Every accepted request's messages, no refused one's, and the quota counts the same.
    expect(await queued(deviceId)).to.equal(acceptedMessages);
    const stats = await apis[0]!.redis.hget(keys.deviceQueue(deviceId), 'messages');
    expect(Number(stats)).to.equal(acceptedMessages);
  });

  it('When a token replays an accepted request (same Idempotency-Key) past its limit, then the replay counts and is refused', async () => {
    const deviceId = freshDeviceId();
    const token = await createToken(apis[0]!, { deviceId });
    await markConnected(apis[0]!.redis, deviceId);
    const idem = { 'idempotency-key': 'replay-1' };
    const first = await call(`${apis[0]!.api}/send`, {
      token,
      headers: idem,
      json: { to: '15551234567', text: 'x' },
    });
    const replay = await call(`${apis[1]!.api}/send`, {
      token,
      headers: idem,
      json: { to: '15551234567', text: 'x' },
    });
    expect([first.status, replay.status]).to.deep.equal([202, 202]);
    expect([rateHeaders(first).remaining, rateHeaders(replay).remaining]).to.deep.equal([
      String(limit - 1),
      String(limit - 2),
    ]);
    await apis[0]!.redis.set(keys.sendRateLimit(deviceId, hashToken(token)), String(limit), 'KEEPTTL');
    const over = await call(`${apis[1]!.api}/send`, {
      token,
      headers: idem,
      json: { to: '15551234567', text: 'x' },
    });
    expect(over.status).to.equal(429);
    expect(over.body.resetIn).to.be.within(1, 60);
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
