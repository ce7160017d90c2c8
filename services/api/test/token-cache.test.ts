import { expect } from 'chai';
import { Redis } from 'ioredis';
import { createLogger } from '@mgw/common';
import { keys } from '@mgw/contracts';
import { TokenStore, hashToken } from '@mgw/store';
import { TokenCache } from '../src/http/token-cache.js';
import { call, createToken, startApi, type TestApi } from './helpers/api.js';

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
    const t0 = Date.now();
    expect(await store.revoke(token.id)).to.equal(true);
    for (;;) {
      if (!(await cache.verify(value)).ok) break;
      expect(Date.now() - t0, 'still accepted after a second').to.be.below(1000);
      await new Promise((r) => setTimeout(r, 10));
    }
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
    await new Promise((r) => setTimeout(r, 50));
    expect(await cache.verify(value)).to.deep.equal({ ok: false, reason: 'invalid' });
  });

  describe('through the API', () => {
    let t: TestApi;
    before(async () => (t = await startApi()));
    after(async () => t.close());

    it('When a token that has been in use is revoked (as the token CLI does), then the API refuses it within a second', async () => {
      const token = await createToken(t, { name: 'in use' });
      expect((await call(`${t.api}/status`, { token })).status).to.equal(200);
      expect((await call(`${t.api}/status`, { token })).status).to.equal(200);
      const [listed] = (await t.services.tokens.list()).filter((x) => x.name === 'in use');
      const t0 = Date.now();
      await t.services.tokens.revoke(listed!.id);
      let status = 200;
      while (status !== 401 && Date.now() - t0 < 1000) {
        status = (await call(`${t.api}/status`, { token })).status;
      }
      expect(status, 'refused within a second of the revocation').to.equal(401);
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
