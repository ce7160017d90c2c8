import { expect } from 'chai';
import { closeRedis, createRedis, waitForRedis } from '@mgw/common';
import { keys } from '@mgw/contracts';
import type { Redis } from 'ioredis';
import { ADMIN_TOKENS, LAST_USED_INTERVAL_MS, TokenStore, hashToken, parseDuration } from '../src/index.js';

describe('TokenStore', () => {
  let redis: Redis;
  let store: TokenStore;
  before(async () => {
    redis = createRedis(process.env.REDIS_URL!, 'producer', 'test-tokens');
    await waitForRedis(redis);
    store = new TokenStore(redis);
  });
  after(async () => closeRedis(redis));

  it('When a token is created, then Redis holds its hash and record but never its value', async () => {
    const { value, token } = await store.create({ name: 'n', deviceId: 'dev-1' });
    const hash = hashToken(value);
    const record = await redis.hgetall(keys.tokenByHash(hash));
    expect(record).to.deep.include({ id: token.id, name: 'n', deviceId: 'dev-1', hash });
    expect(await redis.hget(keys.tokenIndex(), token.id)).to.equal(hash);
    const dump =
      JSON.stringify(await redis.hgetall(keys.tokenByHash(hash))) +
      JSON.stringify(await redis.hgetall(keys.tokenIndex()));
    expect(dump).not.to.include(value);
  });

  it('When verifying, then valid, unknown and expired tokens are told apart', async () => {
    const now = new Date('2030-01-01T00:00:00Z');
    const { value, token } = await store.create({ name: 'e', expiresInMs: 60_000, now });
    expect(await store.verify(value, new Date(now.getTime() + 59_999))).to.deep.equal({
      ok: true,
      token,
      tokenHash: hashToken(value),
    });
    expect(await store.verify(value, new Date(now.getTime() + 60_000))).to.deep.equal({
      ok: false,
      reason: 'expired',
    });
    expect(await store.verify(value + 'x')).to.deep.equal({ ok: false, reason: 'invalid' });
  });

  it('When a stored record carries a different hash than its key, then the token is refused', async () => {
    const { value } = await store.create({ name: 'tampered' });
    await redis.hset(keys.tokenByHash(hashToken(value)), 'hash', hashToken('something else'));
    expect(await store.verify(value)).to.deep.equal({ ok: false, reason: 'invalid' });
  });

  it('When revoke returns, then a subscriber of the revocation channel has the revoked hash in its socket (read on the next turn)', async () => {
    const subscriber = createRedis(process.env.REDIS_URL!, 'subscriber', 'test-tokens-sub');
    try {
      const heard = new Set<string>();
      subscriber.on('message', (_channel: string, hash: string) => heard.add(hash));
      await subscriber.subscribe(keys.tokensChannel());
      let late = 0;
      for (let i = 0; i < 200; i++) {
        const { value, token } = await store.create({ name: `revoked-${i}` });
        expect(await store.revoke(token.id)).to.equal(true);
        // What has reached this process's sockets is read in this turn's poll phase.
        await new Promise((resolve) => setImmediate(resolve));
        if (!heard.has(hashToken(value))) late++;
      }
      expect(late, 'revocations not yet delivered when revoke returned').to.equal(0);
    } finally {
      await closeRedis(subscriber);
    }
  });

  it('When revoking an unknown id, then false', async () => {
    expect(await store.revoke('tok_doesnotexist')).to.equal(false);
  });

  it('When a token is used, then lastUsedAt is written at most once per interval per token, and listed', async () => {
    // A store of its own: the throttle is per store (per process), not shared with other tests.
    const own = new TokenStore(redis);
    const { value, token } = await own.create({ name: 'used' });
    const hash = hashToken(value);
    const t0 = Date.parse('2031-05-01T10:00:00.000Z');
    expect((await own.list()).find((t) => t.id === token.id)).not.to.have.property('lastUsedAt');

    await own.noteUse(hash, undefined, t0);
    expect(await redis.hget(keys.tokenByHash(hash), 'lastUsedAt')).to.equal('2031-05-01T10:00:00.000Z');
    // Within the interval: no write at all (answered without a promise), whatever the clock says.
    expect(own.noteUse(hash, undefined, t0 + 1_000)).to.equal(undefined);
    expect(own.noteUse(hash, undefined, t0 + LAST_USED_INTERVAL_MS - 1)).to.equal(undefined);
    expect(await redis.hget(keys.tokenByHash(hash), 'lastUsedAt')).to.equal('2031-05-01T10:00:00.000Z');
    // Past it: written again.
    await own.noteUse(hash, undefined, t0 + LAST_USED_INTERVAL_MS);
    expect(await redis.hget(keys.tokenByHash(hash), 'lastUsedAt')).to.equal('2031-05-01T10:01:00.000Z');
    expect((await own.list()).find((t) => t.id === token.id)?.lastUsedAt).to.equal(
      '2031-05-01T10:01:00.000Z',
    );
    expect((await own.verify(value)).ok).to.equal(true);
    // Never the value, only the hash-keyed record.
    expect(JSON.stringify(await redis.hgetall(keys.tokenByHash(hash)))).not.to.include(value);
  });

  it('When another process wrote a later lastUsedAt, or the token was revoked, then noteUse writes nothing', async () => {
    const a = new TokenStore(redis);
    const b = new TokenStore(redis);
    const { value, token } = await a.create({ name: 'two processes' });
    const hash = hashToken(value);
    await a.noteUse(hash, undefined, Date.parse('2031-05-01T12:00:00.000Z'));
    await b.noteUse(hash, undefined, Date.parse('2031-05-01T11:00:00.000Z'));
    expect(await redis.hget(keys.tokenByHash(hash), 'lastUsedAt')).to.equal('2031-05-01T12:00:00.000Z');

    expect(await a.revoke(token.id)).to.equal(true);
    await b.noteUse(hash, undefined, Date.parse('2031-05-01T13:00:00.000Z'));
    expect(await redis.exists(keys.tokenByHash(hash)), 'no record made of lastUsedAt alone').to.equal(0);
  });

  it('When the write fails, then the error goes to onError (nothing thrown) and is not retried within the interval', async () => {
    const broken = createRedis(process.env.REDIS_URL!, 'producer', 'test-tokens-broken');
    await waitForRedis(broken);
    const own = new TokenStore(broken);
    const { value } = await own.create({ name: 'broken' });
    await closeRedis(broken);
    const errors: unknown[] = [];
    const t0 = Date.parse('2031-05-02T00:00:00.000Z');
    await own.noteUse(hashToken(value), (err) => errors.push(err), t0);
    expect(errors).to.have.length(1);
    expect(own.noteUse(hashToken(value), (err) => errors.push(err), t0 + 1)).to.equal(undefined);
    await own.noteUse(hashToken(value), (err) => errors.push(err), t0 + LAST_USED_INTERVAL_MS);
    expect(errors).to.have.length(2);
  });

  it('When an admin token is used, then its own record (admin space) gets lastUsedAt', async () => {
    const admins = new TokenStore(redis, ADMIN_TOKENS);
    const { value, token } = await admins.create({ name: 'admin used' });
    await admins.noteUse(hashToken(value));
    const listed = (await admins.list()).find((t) => t.id === token.id);
    expect(Date.parse(listed!.lastUsedAt!)).to.be.closeTo(Date.now(), 5_000);
    expect(await redis.exists(keys.tokenByHash(hashToken(value)))).to.equal(0);
  });

  it("When a workspace's tokens are minted at once past its limit, then it holds the limit; its list reads its own index; a revoke leaves it", async () => {
    const ws = `tk${Date.now().toString(36)}`;
    const made = await Promise.all(
      Array.from({ length: 8 }, (_, i) => store.createWithin({ name: `t${i}`, workspaceId: ws }, 5)),
    );
    const kept = made.filter((m): m is Exclude<typeof m, 'limit'> => m !== 'limit');
    expect(kept).to.have.length(5);
    expect(await redis.hlen(keys.workspaceTokens(ws))).to.equal(5);
    const listed = await store.listWorkspace(ws);
    expect(listed.map((t) => t.id).sort()).to.deep.equal(kept.map((m) => m.token.id).sort());
    expect(await store.revoke(kept[0]!.token.id)).to.equal(true);
    expect(await redis.hexists(keys.workspaceTokens(ws), kept[0]!.token.id)).to.equal(0);
    expect(await store.createWithin({ name: 'again', workspaceId: ws }, 5)).to.not.equal('limit');
    // An entry whose record is gone (a creation that stopped half-way) is dropped when listed.
    await redis.hset(keys.workspaceTokens(ws), 'tok_gone', 'f'.repeat(64));
    expect((await store.listWorkspace(ws)).map((t) => t.id)).to.not.include('tok_gone');
    expect(await redis.hexists(keys.workspaceTokens(ws), 'tok_gone')).to.equal(0);
  });

  it('When tokens of a workspace predate its index, then the backfill lists them there once, and marks itself done', async () => {
    const ws = `bf${Date.now().toString(36)}`;
    const old = await store.create({ name: 'old', workspaceId: ws });
    await redis.del(keys.workspaceTokens(ws), keys.workspaceTokensIndexed());
    expect(await store.listWorkspace(ws)).to.deep.equal([]);
    expect(await store.indexWorkspaceTokens()).to.be.greaterThan(0);
    expect((await store.listWorkspace(ws)).map((t) => t.id)).to.deep.equal([old.token.id]);
    expect(await redis.get(keys.workspaceTokensIndexed())).to.equal('2');
    expect(await store.indexWorkspaceTokens()).to.equal(0);
  });
});

describe("TokenStore: a workspace's list reads its own tokens only", () => {
  let redis: Redis;
  before(async () => {
    redis = createRedis(process.env.REDIS_URL!, 'producer', 'test-tokens-list');
    await waitForRedis(redis);
  });
  after(async () => closeRedis(redis));

  /** The store over a client that notes the key of every command sent through it. */
  const counted = () => {
    const read: string[] = [];
    const client = new Proxy(redis, {
      get(target, prop, receiver) {
        const v = Reflect.get(target, prop, receiver) as unknown;
        if (typeof v !== 'function' || typeof prop !== 'string') return v;
        return (...args: unknown[]) => {
          if (typeof args[0] === 'string') read.push(`${prop} ${args[0]}`);
          return (v as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    return { store: new TokenStore(client), read };
  };

  it("When the install holds many tokens of other workspaces, then listing one workspace's (default's, its old-shape tokens included) reads its index and its records only", async () => {
    const setup = new TokenStore(redis);
    // The backfill of this release has run (the API runs it at start).
    await setup.indexWorkspaceTokens();
    const [mine, other] = [`lm${Date.now().toString(36)}`, `lo${Date.now().toString(36)}`];
    const others = await Promise.all(
      Array.from({ length: 60 }, (_, i) => setup.create({ name: `o${i}`, workspaceId: other })),
    );
    const own = await Promise.all([0, 1].map((i) => setup.create({ name: `m${i}`, workspaceId: mine })));
    const old = await setup.create({ name: 'from before workspaces', deviceId: 'lm-dev' });
    const defaults = await setup.create({ name: 'of default', workspaceId: 'default' });

    const { store, read } = counted();
    const listed = await store.listWorkspace(mine);
    expect(listed.map((t) => t.id).sort()).to.deep.equal(own.map((m) => m.token.id).sort());
    const ownKeys = new Set([
      keys.workspaceTokens(mine),
      ...own.map((m) => keys.tokenByHash(hashToken(m.value))),
    ]);
    expect(read.filter((r) => !ownKeys.has(r.split(' ')[1]!))).to.deep.equal([]);
    expect(read).to.have.length(3);

    read.length = 0;
    const ofDefault = (await store.listWorkspace('default')).map((t) => t.id);
    expect(ofDefault).to.include.members([old.token.id, defaults.token.id]);
    expect(ofDefault).to.not.include.members(own.map((m) => m.token.id));
    expect(
      read.some((r) => r.startsWith('hgetall ') && r.endsWith(keys.tokenIndex())),
      'the install index',
    ).to.equal(false);
    // Its index, the backfill's mark and one read per token in default's index: never a record of
    // the other 62. (Not a count: the suite's other files share this Redis and revoke default's
    // tokens meanwhile; an entry whose record is gone is read, then dropped from the index.)
    const notDefaults = new Set([...others, ...own].map((m) => keys.tokenByHash(hashToken(m.value))));
    expect(read.filter((r) => notDefaults.has(r.split(' ')[1]!))).to.deep.equal([]);
    const defaultIndex = keys.workspaceTokens('default');
    const records = read.filter((r) => r.startsWith('hgetall ') && r !== `hgetall ${defaultIndex}`);
    expect(records.length).to.be.at.least(ofDefault.length);
    const rest = read.filter((r) => !records.includes(r));
    expect(rest).to.include(`hgetall ${defaultIndex}`);
    expect(rest.map((r) => r.split(' ')[1])).to.satisfy((ks: string[]) =>
      ks.every((k) => k === defaultIndex || k === keys.workspaceTokensIndexed()),
    );

    // Revoked, an old-shape token leaves default's index too.
    expect(await setup.revoke(old.token.id)).to.equal(true);
    expect(await redis.hexists(keys.workspaceTokens('default'), old.token.id)).to.equal(0);
  });

  it("When default's old-shape tokens predate its index, then its list reads the install's until the backfill lists them there", async () => {
    const setup = new TokenStore(redis);
    const old = await setup.create({ name: 'older still' });
    // As an install left by the release that indexed workspace tokens only.
    await redis.hdel(keys.workspaceTokens('default'), old.token.id);
    await redis.set(keys.workspaceTokensIndexed(), '1');
    expect((await setup.listWorkspace('default')).map((t) => t.id)).to.include(old.token.id);
    expect(await setup.indexWorkspaceTokens()).to.be.greaterThan(0);
    expect(await redis.get(keys.workspaceTokensIndexed())).to.equal('2');
    expect(await redis.hget(keys.workspaceTokens('default'), old.token.id)).to.equal(
      await redis.hget(keys.tokenIndex(), old.token.id),
    );
    expect((await setup.listWorkspace('default')).map((t) => t.id)).to.include(old.token.id);
  });
});

describe('parseDuration', () => {
  it('When given <n>s|m|h|d, then milliseconds; anything else, undefined', () => {
    expect(['45s', '10m', '12h', '30d'].map(parseDuration)).to.deep.equal([
      45_000, 600_000, 43_200_000, 2_592_000_000,
    ]);
    expect(['30x', '0d', '-1d', '1.5h', 'd', '', '30 d'].map(parseDuration)).to.deep.equal(
      Array(7).fill(undefined),
    );
  });
});
