import { expect } from 'chai';
import { Redis } from 'ioredis';
import { randomBytes } from 'node:crypto';
import { keys } from '@mgw/contracts';
import { Encryption } from '@mgw/store';
import { waitFor } from '@mgw/testing';
import {
  FencedWriteError,
  LeaseManager,
  LeaseMissingError,
  authCacheBytes,
  configureAuthCache,
  hasLinkedCredentials,
  loadAuthState,
  purgeAuthState,
} from '../src/index.js';

describe('messenger: Redis auth state with lease fencing (real Redis)', () => {
  let redis: Redis;
  const encryption = Encryption.fromEnv();
  const devices: string[] = [];
  const device = () => {
    const id = 'auth-' + randomBytes(4).toString('hex');
    devices.push(id);
    return id;
  };
  before(() => {
    redis = new Redis(process.env.REDIS_URL!);
  });
  after(async () => {
    for (const d of devices) {
      const found = await redis.keys(keys.authPattern(d));
      if (found.length) await redis.del(...found);
      await redis.del(keys.lease(d), keys.leaseEpoch(d));
    }
    await redis.quit();
  });

  it('When keys of every Baileys 7 type are written, then a fresh load reads them back with Buffers intact', async () => {
    const id = device();
    const lease = (await new LeaseManager(redis, 'w', 5000).acquire(id))!;
    const a = await loadAuthState({ redis, encryption, deviceId: id, epoch: () => lease.epoch });
    const bytes = randomBytes(32);
    await a.state.keys.set({
      'pre-key': { '1': { public: bytes, private: bytes } },
      session: { 'x.0': bytes },
      'sender-key': { g: bytes },
      'sender-key-memory': { g: { 'x@s.whatsapp.net': true } },
      'app-state-sync-key': { k: { keyData: bytes, timestamp: 5 } },
      'lid-mapping': { '15551234567': '99999@lid' },
      'device-list': { '15551234567': ['0', '3'] },
      tctoken: { 'x@s.whatsapp.net': { token: bytes, timestamp: '7' } },
      'identity-key': { 'x.0': bytes },
    });
    a.state.creds.me = { id: '15550001111:5@s.whatsapp.net', name: 'Me' };
    await a.saveCreds();
    // requestPairingCode sets `me` before any link: only the signed account identity counts.
    expect(await hasLinkedCredentials(redis, id, encryption)).to.equal(false);
    a.state.creds.account = { details: bytes, accountSignature: bytes };
    await a.saveCreds();

    const b = await loadAuthState({ redis, encryption, deviceId: id, epoch: () => lease.epoch });
    expect(b.registered).to.equal(true);
    expect(
      Buffer.from(b.state.creds.noiseKey.private).equals(Buffer.from(a.state.creds.noiseKey.private)),
    ).to.equal(true);
    expect(Buffer.isBuffer((await b.state.keys.get('session', ['x.0']))['x.0'])).to.equal(true);
    expect((await b.state.keys.get('pre-key', ['1']))['1']!.public).to.deep.equal(bytes);
    expect((await b.state.keys.get('lid-mapping', ['15551234567']))['15551234567']).to.equal('99999@lid');
    expect((await b.state.keys.get('device-list', ['15551234567']))['15551234567']).to.deep.equal(['0', '3']);
    expect(
      (await b.state.keys.get('tctoken', ['x@s.whatsapp.net']))['x@s.whatsapp.net']!.token,
    ).to.deep.equal(bytes);
    const sync = (await b.state.keys.get('app-state-sync-key', ['k']))['k']!;
    expect(Buffer.from(sync.keyData!)).to.deep.equal(bytes);
    expect(await b.state.keys.get('session', ['missing'])).to.deep.equal({});
    expect(await hasLinkedCredentials(redis, id, encryption)).to.equal(true);
  });

  it('When a key is set to null, then it is deleted from Redis and from the cache', async () => {
    const id = device();
    const lease = (await new LeaseManager(redis, 'w', 5000).acquire(id))!;
    const a = await loadAuthState({ redis, encryption, deviceId: id, epoch: () => lease.epoch });
    await a.state.keys.set({ session: { s: randomBytes(8) } });
    await a.state.keys.set({ session: { s: null } });
    expect(await a.state.keys.get('session', ['s'])).to.deep.equal({});
    expect(await redis.hexists(keys.authKeys(id, 'session'), 's')).to.equal(0);
  });

  it('When pre-keys are written, then they go to Redis without taking room in the cache, and a read finds them', async () => {
    const id = device();
    const lease = (await new LeaseManager(redis, 'w', 5000).acquire(id))!;
    const a = await loadAuthState({ redis, encryption, deviceId: id, epoch: () => lease.epoch });
    const bytes = randomBytes(32);
    const before = authCacheBytes();
    const preKeys = Object.fromEntries(
      Array.from({ length: 50 }, (_, i) => [String(i + 1), { public: bytes, private: bytes }]),
    );
    await a.state.keys.set({ 'pre-key': preKeys });
    expect(authCacheBytes()).to.equal(before);
    expect(await redis.hlen(keys.authKeys(id, 'pre-key'))).to.equal(50);
    expect((await a.state.keys.get('pre-key', ['7']))['7']!.private).to.deep.equal(bytes);
    // Used once, then deleted: a value read into the cache goes with the delete.
    await a.state.keys.set({ 'pre-key': { '7': null } });
    expect(await a.state.keys.get('pre-key', ['7'])).to.deep.equal({});
  });

  it('When a socket releases its auth state, then its keys leave the cache, another device keeps its own, and reads still find them in Redis', async () => {
    const lease = new LeaseManager(redis, 'w', 5000);
    const [idA, idB] = [device(), device()];
    const [la, lb] = [(await lease.acquire(idA))!, (await lease.acquire(idB))!];
    const a = await loadAuthState({ redis, encryption, deviceId: idA, epoch: () => la.epoch });
    const b = await loadAuthState({ redis, encryption, deviceId: idB, epoch: () => lb.epoch });
    const before = authCacheBytes();
    const value = randomBytes(300);
    await a.state.keys.set({ session: { s1: value, s2: value } });
    await b.state.keys.set({ session: { s1: value } });
    const withB = authCacheBytes() - before;
    await redis.hset(keys.authKeys(idB, 'session'), 's1', 'not read: served from the cache');
    a.release();
    await waitFor(async () => authCacheBytes() - before < withB, {
      what: 'the released keys to leave the cache',
    });
    expect((await a.state.keys.get('session', ['s2']))['s2']).to.deep.equal(value);
    expect(authCacheBytes() - before, 'a released scope caches nothing more').to.be.below(withB);
    expect((await b.state.keys.get('session', ['s1']))['s1']).to.deep.equal(value);
  });

  it('When a key was read once, then later reads are served from memory without touching Redis', async () => {
    const id = device();
    const lease = (await new LeaseManager(redis, 'w', 5000).acquire(id))!;
    const a = await loadAuthState({ redis, encryption, deviceId: id, epoch: () => lease.epoch });
    await a.state.keys.set({ session: { s: Buffer.from('one') } });
    await redis.hset(keys.authKeys(id, 'session'), 's', JSON.stringify('changed-behind-our-back'));
    expect((await a.state.keys.get('session', ['s']))['s']).to.deep.equal(Buffer.from('one'));
  });

  it('When the lease moved to a newer owner, then the old owner cannot overwrite keys or creds', async () => {
    const id = device();
    const leases = new LeaseManager(redis, 'old', 5000);
    const old = (await leases.acquire(id))!;
    let fencedCalls = 0;
    const a = await loadAuthState({
      redis,
      encryption,
      deviceId: id,
      epoch: () => old.epoch,
      onFenced: () => fencedCalls++,
    });
    await a.state.keys.set({ session: { s: Buffer.from('v1') } });

    await redis.del(keys.lease(id));
    const fresh = (await new LeaseManager(redis, 'new', 5000).acquire(id))!;
    const b = await loadAuthState({ redis, encryption, deviceId: id, epoch: () => fresh.epoch });
    await b.state.keys.set({ session: { s: Buffer.from('v2') } });

    let err: unknown;
    try {
      await a.state.keys.set({ session: { s: Buffer.from('stale') } });
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(FencedWriteError);
    await a.saveCreds().catch(() => undefined);
    expect(fencedCalls).to.equal(1);
    const c = await loadAuthState({ redis, encryption, deviceId: id, epoch: () => undefined });
    expect((await c.state.keys.get('session', ['s']))['s']).to.deep.equal(Buffer.from('v2'));
    expect(await redis.get(keys.authCreds(id))).to.equal(null);
  });

  it('When the lease expired (missing) and is not re-acquired in time, then the write fails retryably and the writer is not fenced', async () => {
    const id = device();
    const leases = new LeaseManager(redis, 'slow', 5000);
    let lease = (await leases.acquire(id))!;
    let fencedCalls = 0;
    const a = await loadAuthState({
      redis,
      encryption,
      deviceId: id,
      epoch: () => lease.epoch,
      onFenced: () => fencedCalls++,
      missingLeaseWaitMs: 300,
    });
    await redis.del(keys.lease(id));
    const err = await Promise.resolve(a.state.keys.set({ session: { s: Buffer.from('v1') } })).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(LeaseMissingError);
    expect(fencedCalls).to.equal(0);
    // The renew loop re-acquires (epoch + 1): writes go on.
    lease = (await leases.acquire(id))!;
    await a.state.keys.set({ session: { s: Buffer.from('v2') } });
    await a.saveCreds();
    expect(fencedCalls).to.equal(0);
    expect(await redis.hget(keys.authKeys(id, 'session'), 's')).to.not.equal(null);
    expect(await redis.get(keys.authCreds(id))).to.not.equal(null);
  });

  it('When the lease expired and is re-acquired while a write waits, then the write is applied under the new epoch', async () => {
    const id = device();
    const leases = new LeaseManager(redis, 'slow', 5000);
    let lease = (await leases.acquire(id))!;
    const a = await loadAuthState({
      redis,
      encryption,
      deviceId: id,
      epoch: () => lease.epoch,
      missingLeaseWaitMs: 10_000,
    });
    await redis.del(keys.lease(id));
    const writing = a.saveCreds();
    lease = (await leases.acquire(id))!;
    await writing;
    expect(await redis.get(keys.authCreds(id))).to.not.equal(null);
  });

  it('When the lease expired and another owner took it, then a waiting write is fenced for good', async () => {
    const id = device();
    const old = (await new LeaseManager(redis, 'old', 5000).acquire(id))!;
    let fencedCalls = 0;
    const a = await loadAuthState({
      redis,
      encryption,
      deviceId: id,
      epoch: () => old.epoch,
      onFenced: () => fencedCalls++,
      missingLeaseWaitMs: 10_000,
    });
    await redis.del(keys.lease(id));
    const writing = a.saveCreds().then(
      () => undefined,
      (e: unknown) => e,
    );
    await new LeaseManager(redis, 'new', 5000).acquire(id);
    expect(await writing).to.be.instanceOf(FencedWriteError);
    expect(fencedCalls).to.equal(1);
    expect(await redis.get(keys.authCreds(id))).to.equal(null);
  });

  it('When a purge is asked for an id with glob characters, then it is refused and no other device loses a key', async () => {
    const id = device();
    const lease = (await new LeaseManager(redis, 'w', 5000).acquire(id))!;
    const a = await loadAuthState({ redis, encryption, deviceId: id, epoch: () => lease.epoch });
    await a.saveCreds();
    const err = await purgeAuthState(redis, '*', lease.epoch).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(Error);
    expect(await redis.get(keys.authCreds(id))).to.not.equal(null);
  });

  it('When a device is purged by the lease holder, then no credential, key or phone <-> LID pair remains', async () => {
    const id = device();
    const lease = (await new LeaseManager(redis, 'w', 5000).acquire(id))!;
    const learnt: { phone: string; lid: string }[] = [];
    const a = await loadAuthState({
      redis,
      encryption,
      deviceId: id,
      epoch: () => lease.epoch,
      onLidMapping: (pairs) => learnt.push(...pairs),
    });
    await a.state.keys.set({
      session: { s: Buffer.from('x') },
      'pre-key': { '1': { public: Buffer.alloc(32), private: Buffer.alloc(32) } },
      'lid-mapping': { '15551230001': '111222333444555', '111222333444555_reverse': '15551230001' },
    });
    // Baileys' lid-mapping keys are reported as pairs (the reverse entries mirror them).
    expect(learnt).to.deep.equal([{ phone: '15551230001', lid: '111222333444555@lid' }]);
    await redis.hset(keys.contactIdentities(id), 'p:15551230001', '111222333444555');
    await a.saveCreds();
    expect(await purgeAuthState(redis, id, lease.epoch + 1)).to.equal(false);
    expect(await redis.exists(keys.contactIdentities(id))).to.equal(1);
    expect(await purgeAuthState(redis, id, lease.epoch)).to.equal(true);
    expect(await redis.keys(keys.authPattern(id))).to.deep.equal([]);
    expect(await redis.exists(keys.contactIdentities(id))).to.equal(0);
  });

  it('When the process re-acquired the lease while a write with its previous epoch was on its way, then the write goes again under the new epoch and nothing is fenced', async () => {
    const id = device();
    const leases = new LeaseManager(redis, 'same', 5000);
    let lease = (await leases.acquire(id))!;
    const previous = lease.epoch;
    let fencedCalls = 0;
    let asked = 0;
    const a = await loadAuthState({
      redis,
      encryption,
      deviceId: id,
      // The first write reads the old epoch; by the time it runs, the process holds a newer one.
      epoch: () => (asked++ === 0 ? previous : lease.epoch),
      onFenced: () => fencedCalls++,
    });
    await leases.release(lease);
    lease = (await leases.acquire(id))!;
    expect(lease.epoch).to.be.above(previous);
    await a.saveCreds();
    await a.state.keys.set({ session: { s: Buffer.from('after') } });
    expect(fencedCalls).to.equal(0);
    expect(await redis.get(keys.authCreds(id))).to.not.equal(null);
  });

  it('When another owner holds a newer lease, then a write carrying an older epoch is still fenced', async () => {
    const id = device();
    const mine = (await new LeaseManager(redis, 'mine', 5000).acquire(id))!;
    let fencedCalls = 0;
    const a = await loadAuthState({
      redis,
      encryption,
      deviceId: id,
      epoch: () => mine.epoch,
      onFenced: () => fencedCalls++,
    });
    await redis.del(keys.lease(id));
    await new LeaseManager(redis, 'theirs', 5000).acquire(id);
    const err = await a.saveCreds().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(FencedWriteError);
    expect(fencedCalls).to.equal(1);
  });

  it('When the cache bound is reached, then least recently used keys are evicted, the cache stays within its bound and a miss is read back from Redis', async () => {
    const counted = { hits: 0, misses: 0, evictions: 0 };
    const bound = 8 * 1024;
    configureAuthCache({
      maxBytes: bound,
      stats: {
        hits: (n) => (counted.hits += n),
        misses: (n) => (counted.misses += n),
        evicted: () => counted.evictions++,
        size: () => undefined,
      },
    });
    try {
      const id = device();
      const lease = (await new LeaseManager(redis, 'w', 5000).acquire(id))!;
      const a = await loadAuthState({ redis, encryption, deviceId: id, epoch: () => lease.epoch });
      const sessions = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`c${i}`, randomBytes(200)]));
      for (const [cid, v] of Object.entries(sessions)) await a.state.keys.set({ session: { [cid]: v } });
      expect(authCacheBytes()).to.be.at.most(bound);
      expect(counted.evictions).to.be.above(50);
      // The first contacts were evicted long ago: read from Redis, opened, and equal to what was written.
      const back = await a.state.keys.get('session', Object.keys(sessions));
      for (const [cid, v] of Object.entries(sessions))
        expect(Buffer.from(back[cid] as Uint8Array), cid).to.deep.equal(v);
      expect(counted.misses).to.be.above(50);
      expect(authCacheBytes()).to.be.at.most(bound);
    } finally {
      configureAuthCache({ maxBytes: 64 * 1024 * 1024 });
    }
  });

  it('When keys are warmed ahead of their lookups, then the warm-up counts nothing and the lookups count what they would have without it', async () => {
    const counted = { hits: 0, misses: 0 };
    configureAuthCache({
      stats: {
        hits: (n) => (counted.hits += n),
        misses: (n) => (counted.misses += n),
        evicted: () => undefined,
        size: () => undefined,
      },
    });
    try {
      const id = device();
      const lease = (await new LeaseManager(redis, 'w', 5000).acquire(id))!;
      const writer = await loadAuthState({ redis, encryption, deviceId: id, epoch: () => lease.epoch });
      const session = randomBytes(64);
      await writer.state.keys.set({ session: { 'c.0': session } });
      // A fresh load (a restarted sender): nothing of the device is cached.
      const a = await loadAuthState({ redis, encryption, deviceId: id, epoch: () => lease.epoch });
      const reads = await watchCommands(() => a.state.keys.warm('session', ['c.0', 'absent.0']));
      expect(reads, 'one read from Redis for both keys').to.deep.equal(['hmget']);
      expect(counted).to.deep.equal({ hits: 0, misses: 0 });
      // The lookup the warm-up served reads no Redis, and counts the two misses it was spared.
      const first = await watchCommands(async () => {
        const got = await a.state.keys.get('session', ['c.0', 'absent.0']);
        expect(Buffer.from(got['c.0'] as Uint8Array)).to.deep.equal(session);
        expect(got['absent.0']).to.equal(undefined);
      });
      expect(first).to.deep.equal([]);
      expect(counted).to.deep.equal({ hits: 0, misses: 2 });
      await a.state.keys.get('session', ['c.0', 'absent.0']);
      expect(counted).to.deep.equal({ hits: 2, misses: 2 });
      // Warming what is cached reads nothing and counts nothing.
      expect(await watchCommands(() => a.state.keys.warm('session', ['c.0']))).to.deep.equal([]);
      await a.state.keys.get('session', ['c.0']);
      expect(counted).to.deep.equal({ hits: 3, misses: 2 });
      a.release();
      writer.release();
    } finally {
      configureAuthCache({ maxBytes: 64 * 1024 * 1024 });
    }
  });

  /** The commands this test's connection sends while `run` runs (ioredis' own sendCommand, watched). */
  async function watchCommands(run: () => Promise<unknown>): Promise<string[]> {
    const sent: string[] = [];
    const send = redis.sendCommand.bind(redis);
    redis.sendCommand = ((command: { name: string }, ...rest: unknown[]) => {
      sent.push(command.name);
      return (send as (...a: unknown[]) => unknown)(command, ...rest);
    }) as typeof redis.sendCommand;
    try {
      await run();
    } finally {
      redis.sendCommand = send;
    }
    return sent;
  }
});
