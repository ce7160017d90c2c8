import { expect } from 'chai';
import { Redis } from 'ioredis';
import { createLogger } from '@mgw/common';
import { keys } from '@mgw/contracts';
import { TokenStore, hashToken } from '@mgw/store';
import { waitFor } from '@mgw/testing';
import { TokenCache } from '../src/http/token-cache.js';
import { call, createToken, startApi, type TestApi } from './helpers/api.js';
import { lastLine, tokenCli } from './helpers/cli.js';

// API tokens: the in-memory cache of verified tokens (revocations heard at once, in this process
// and through the API) and the token CLI (create, list, revoke, expiry, workspaces, bad arguments).

/**
 * Verified tokens are kept in memory for a short while (no Redis round trip per request); a
 * revocation is published and drops the token from every API process at once.
 */
describe('API token cache', () => {
  let redis: Redis;
  let subscriber: Redis;
  let store: TokenStore;
  const logger = createLogger({ level: 'silent', service: 'test' });

  before(() => {
    redis = new Redis(process.env.REDIS_URL!);
    store = new TokenStore(redis);
  });
  beforeEach(() => {
    subscriber = new Redis(process.env.REDIS_URL!);
  });
  afterEach(() => subscriber.disconnect());
  after(() => redis.quit());

  it('When a token was verified once, then it is served from memory (its Redis record is not read again)', async () => {
    const cache = new TokenCache(store, subscriber, logger);
    await cache.start();
    const { value, token } = await store.create({ name: 'cached' });
    expect((await cache.verify(value)).ok).to.equal(true);
    // Deleted behind the cache's back (no publication): the cached entry still answers.
    await redis.del(keys.tokenByHash(hashToken(value)));
    const again = await cache.verify(value);
    expect(again).to.deep.include({ ok: true, token });
  });

  it('When a token is revoked, then the cache forgets it as soon as the revocation is heard', async () => {
    const cache = new TokenCache(store, subscriber, logger);
    await cache.start();
    const { value, token } = await store.create({ name: 'revoked' });
    expect((await cache.verify(value)).ok).to.equal(true);
    expect(await store.revoke(token.id)).to.equal(true);
    // The revocation heard (a few ms when quiet; the wait is 10 s): the cached entry is gone.
    await waitFor(async () => !(await cache.verify(value)).ok, {
      timeoutMs: 10_000,
      intervalMs: 10,
      what: 'the revocation heard',
    });
    expect(await cache.verify(value)).to.deep.equal({ ok: false, reason: 'invalid' });
  });

  it('When a cached token reaches its expiry, then it is refused from the cache as expired', async () => {
    const cache = new TokenCache(store, subscriber, logger);
    await cache.start();
    const now = new Date();
    const { value } = await store.create({ name: 'expiring', expiresInMs: 60_000, now });
    expect((await cache.verify(value, now)).ok).to.equal(true);
    expect(await cache.verify(value, new Date(now.getTime() + 61_000))).to.deep.equal({
      ok: false,
      reason: 'expired',
    });
  });

  it('When the revocation channel is not subscribed (Redis away), then nothing is cached: every check reads Redis', async () => {
    const cache = new TokenCache(store, subscriber, logger);
    // Not started: no subscription, so no revocation could reach it.
    const { value } = await store.create({ name: 'uncached' });
    expect((await cache.verify(value)).ok).to.equal(true);
    await redis.del(keys.tokenByHash(hashToken(value)));
    expect(await cache.verify(value)).to.deep.equal({ ok: false, reason: 'invalid' });
  });

  it('When the subscriber connection drops, then the cache is emptied (revocations may have been missed)', async () => {
    const cache = new TokenCache(store, subscriber, logger);
    await cache.start();
    const { value } = await store.create({ name: 'dropped' });
    expect((await cache.verify(value)).ok).to.equal(true);
    await redis.del(keys.tokenByHash(hashToken(value)));
    subscriber.disconnect(true); // reconnects
    // The drop heard: the cached entry (whose record is gone) no longer answers.
    await waitFor(async () => !(await cache.verify(value)).ok, {
      timeoutMs: 10_000,
      intervalMs: 10,
      what: 'the cache emptied',
    });
    expect(await cache.verify(value)).to.deep.equal({ ok: false, reason: 'invalid' });
  });

  describe('through the API', () => {
    let t: TestApi;
    before(async () => (t = await startApi()));
    after(async () => t.close());

    it('When a token that has been in use is revoked (as the token CLI does), then the API refuses it as soon as it hears the revocation', async () => {
      const token = await createToken(t, { name: 'in use' });
      expect((await call(`${t.api}/status`, { token })).status).to.equal(200);
      expect((await call(`${t.api}/status`, { token })).status).to.equal(200);
      const [listed] = (await t.services.tokens.list()).filter((x) => x.name === 'in use');
      await t.services.tokens.revoke(listed!.id);
      // Heard through Redis in a few ms when quiet; the wait is 10 s.
      await waitFor(async () => (await call(`${t.api}/status`, { token })).status === 401, {
        timeoutMs: 10_000,
        intervalMs: 10,
        what: 'the token refused after its revocation',
      });
    });

    it('When a token in use is revoked in this process, then the very next request is refused (100 times)', async () => {
      let served = 0;
      for (let i = 0; i < 100; i++) {
        const { value, token } = await t.services.tokens.create({ name: `revoked-${i}` });
        expect((await call(`${t.api}/status`, { token: value })).status).to.equal(200);
        await t.services.tokens.revoke(token.id);
        if ((await call(`${t.api}/status`, { token: value })).status !== 401) served++;
      }
      expect(served, 'requests served after revoke returned').to.equal(0);
    });
  });
});

describe('token CLI', function () {
  // Each CLI run starts a Node process with tsx (seconds on a loaded machine): a test runs five.
  this.timeout(150_000);
  // The CLI's runner, by the name its tests call it (the cache's tests name their tokens `token`).
  const token = tokenCli;
  let t: TestApi;
  before(async () => (t = await startApi()));
  after(async () => t.close());

  it('When a token is created, then its value is the last line of stdout, it authenticates, list never shows it, and revoke makes it fail with 401', async () => {
    const created = await token('create', '--name', 'ci deploy', '--device', 'shop-1');
    expect(created.code).to.equal(0);
    const value = lastLine(created.stdout);
    expect(value).to.match(/^mgw_[A-Za-z0-9_-]{43}$/);
    const id = /tok_[0-9a-f]{12}/.exec(created.stdout)?.[0];
    expect(id).to.be.a('string');

    const status = await call(`${t.api}/status`, { token: value });
    expect(status.status).to.equal(200);

    // Its use is noted in the background (at most once a minute): LAST USED shows it.
    let listed = await token('list');
    await waitFor(
      async () =>
        /ci deploy\s+shop-1\s+\S+Z\s+\S+Z\s+never\s+no$/.test(
          (listed = await token('list')).stdout.split('\n').find((l) => l.startsWith(id!)) ?? '',
        ),
      { timeoutMs: 45_000, what: 'LAST USED set by the /status call' },
    );
    expect(listed.code).to.equal(0);
    expect(listed.stdout.split('\n')[0]).to.match(
      /^ID\s+NAME\s+DEVICE\/POOL\s+CREATED\s+LAST USED\s+EXPIRES\s+EXPIRED$/,
    );
    expect(listed.stdout).not.to.include(value);
    const { hashToken } = await import('@mgw/store');
    expect(listed.stdout).not.to.include(hashToken(value));

    const revoked = await token('revoke', id!);
    expect(revoked.code).to.equal(0);
    const after = await call(`${t.api}/status`, { token: value });
    expect(after.status).to.equal(401);
    expect(after.body).to.deep.equal({ success: false, error: 'Invalid API token' });
    expect((await token('list')).stdout).not.to.include(id!);
  });

  it('When a token created with --expires-in has expired, then it fails with 401 and list marks it expired', async () => {
    const created = await token('create', '--name', 'short', '--expires-in', '1s');
    expect(created.code).to.equal(0);
    const value = lastLine(created.stdout);
    const expiresAt = /expires: (\S+)\)/.exec(created.stdout)?.[1];
    expect(Date.parse(expiresAt!) - Date.now()).to.be.lessThan(1000);
    // Wait until the expiry instant has passed (the outcome after it cannot change).
    await new Promise((r) => setTimeout(r, Math.max(0, Date.parse(expiresAt!) - Date.now()) + 20));

    const res = await call(`${t.api}/status`, { token: value });
    expect(res.status).to.equal(401);
    const id = /tok_[0-9a-f]{12}/.exec(created.stdout)![0];
    const row = (await token('list')).stdout.split('\n').find((l) => l.startsWith(id));
    // Never used: the only call was refused.
    expect(row).to.match(/short\s+\(default\)\s+\S+\s+never\s+\S+\s+yes$/);
  });

  it('When the arguments are wrong, then a clear error on stderr and a non-zero exit', async () => {
    const [unknown, noName, badExpiry, badDevice, noId, revokeMissing] = await Promise.all([
      token('rotate'),
      token('create'),
      token('create', '--name', 'x', '--expires-in', '30x'),
      token('create', '--name', 'x', '--device', 'Bad Device!'),
      token('revoke'),
      token('revoke', 'tok_000000000000'),
    ]);
    expect(unknown.code).to.not.equal(0);
    expect(unknown.stderr).to.include('unknown command: rotate');
    expect(noName.code).to.not.equal(0);
    expect(noName.stderr).to.include('--name is required');
    expect(badExpiry.code).to.not.equal(0);
    expect(badExpiry.stderr).to.include('--expires-in must be a positive number followed by s, m, h or d');
    expect(badDevice.code).to.not.equal(0);
    expect(badDevice.stderr).to.include('--device must be a device id');
    expect(noId.code).to.not.equal(0);
    expect(noId.stderr).to.include('revoke takes exactly one token id');
    expect(revokeMissing.code).to.equal(1);
    expect(revokeMissing.stderr).to.include('no token with id tok_000000000000');
    for (const r of [unknown, noName, badExpiry, badDevice, noId]) expect(r.stdout).to.equal('');
  });

  it('When --expires-in is past the 3650-day maximum (or past any date), then one clear line on stderr and a non-zero exit; the maximum itself is made', async () => {
    const [atMax, overDays, overSeconds, pastDates, adminOver, tooManyDigits] = await Promise.all([
      token('create', '--name', 'ten years', '--expires-in', '3650d'),
      token('create', '--name', 'x', '--expires-in', '3651d'),
      token('create', '--name', 'x', '--expires-in', '315360001s'),
      token('create', '--name', 'x', '--expires-in', '9999999999d'),
      token('admin-create', '--name', 'x', '--expires-in', '87601h'),
      token('create', '--name', 'x', '--expires-in', '9007199254740993s'),
    ]);
    expect(atMax.code, atMax.stderr).to.equal(0);
    const expiresAt = /expires: (\S+)\)/.exec(atMax.stdout)![1]!;
    expect(Date.parse(expiresAt) - Date.now()).to.be.within(3650 * 86_400_000 - 120_000, 3650 * 86_400_000);
    for (const r of [overDays, overSeconds, pastDates, adminOver]) {
      expect(r.code).to.equal(2);
      expect(r.stdout).to.equal('');
      expect(r.stderr.split('\n')[0]).to.match(
        /^error: --expires-in must be at most 3650d \(10 years\); leave it out for a token that never expires \(got "\d+[smhd]"\)$/,
      );
    }
    expect(tooManyDigits.code).to.equal(2);
    expect(tooManyDigits.stderr).to.include(
      '--expires-in must be a positive number followed by s, m, h or d',
    );
  });

  it('When a token is created with --workspace, then it is a workspace token acting on the devices of that workspace only; an unknown workspace or a device of another is refused', async () => {
    const ws = `cli${process.pid}`;
    await t.services.workspaces.create({ id: ws, name: 'CLI customer' });
    const device = `cli-d${process.pid}`;
    expect(await t.services.workspaces.addDevice(ws, device)).to.equal('added');
    const made = await token('create', '--name', 'customer', '--workspace', ws);
    expect(made.code, made.stderr).to.equal(0);
    expect(made.stdout).to.include(`every device of workspace ${ws}`);
    const value = lastLine(made.stdout);
    expect((await call(`${t.api}/devices`, { token: value })).status).to.equal(200);
    expect((await call(`${t.api}/devices/${device}/status`, { token: value })).status).to.equal(200);
    expect(
      (await call(`${t.api}/devices/${t.config.defaultDeviceId}/status`, { token: value })).status,
    ).to.equal(404);
    const id = /Created token (tok_[0-9a-f]+)/.exec(made.stdout)![1]!;
    const row = (await token('list')).stdout.split('\n').find((l) => l.startsWith(id));
    expect(row).to.include(`workspace:${ws}`);
    const [unknown, foreign] = await Promise.all([
      token('create', '--name', 'x', '--workspace', 'no-such-workspace'),
      token('create', '--name', 'x', '--workspace', ws, '--device', t.config.defaultDeviceId),
    ]);
    expect(unknown.code).to.equal(1);
    expect(unknown.stderr).to.include('no workspace with id no-such-workspace');
    expect(foreign.code).to.equal(1);
    expect(foreign.stderr).to.include(`is not a device of workspace ${ws}`);
  });
});
