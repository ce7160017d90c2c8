import { expect } from 'chai';
import { Redis } from 'ioredis';
import { randomBytes } from 'node:crypto';
import { BufferJSON } from '@whiskeysockets/baileys';
import { keys } from '@mgw/contracts';
import { Encryption, storageContext } from '@mgw/store';
import { LeaseManager, loadAuthState } from '../src/index.js';
import { decodeAuthValue, encodeAuthValue } from '../src/auth-codec.js';

/**
 * Signal keys are written compact before they are sealed (auth-codec.ts); what earlier releases
 * wrote (sealed JSON of Buffers) is still read: an account linked before keeps working.
 */
describe('messenger: compact Signal keys at rest, the old JSON still read (real Redis)', () => {
  let redis: Redis;
  const encryption = Encryption.fromEnv();
  const devices: string[] = [];
  const device = () => {
    const id = 'codec-' + randomBytes(4).toString('hex');
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

  /** What a release before the compact forms wrote: sealed JSON with Buffers as base64. */
  const writeOld = (id: string, type: string, field: string, value: unknown) => {
    const key = keys.authKeys(id, type);
    const json = JSON.stringify(value, BufferJSON.replacer);
    return redis.hset(key, field, encryption.sealText(json, storageContext(key, field)));
  };
  const opened = async (id: string, type: string, field: string) => {
    const key = keys.authKeys(id, type);
    return encryption.openText((await redis.hget(key, field))!, storageContext(key, field));
  };

  it('When keys were written by an earlier release (sealed JSON), then they are read as they were, and rewritten compact', async () => {
    const id = device();
    const pair = { private: randomBytes(32), public: randomBytes(32) };
    const session = randomBytes(700);
    const sync = { keyData: randomBytes(32), timestamp: 5 };
    await writeOld(id, 'pre-key', '9', pair);
    await writeOld(id, 'session', 'x.0', session);
    await writeOld(id, 'app-state-sync-key', 'k', sync);
    await writeOld(id, 'lid-mapping', '15551234567', '99999');

    const lease = (await new LeaseManager(redis, 'w', 5000).acquire(id))!;
    const a = await loadAuthState({ redis, encryption, deviceId: id, epoch: () => lease.epoch });
    const got = (await a.state.keys.get('pre-key', ['9']))['9']!;
    expect(Buffer.from(got.private).equals(pair.private)).to.equal(true);
    expect(Buffer.from(got.public).equals(pair.public)).to.equal(true);
    expect(Buffer.from((await a.state.keys.get('session', ['x.0']))['x.0']!).equals(session)).to.equal(true);
    expect(Buffer.from((await a.state.keys.get('app-state-sync-key', ['k']))['k']!.keyData!)).to.deep.equal(
      sync.keyData,
    );
    expect((await a.state.keys.get('lid-mapping', ['15551234567']))['15551234567']).to.equal('99999');

    // The next write of a key is compact; sealed as before, read back the same.
    expect((await opened(id, 'pre-key', '9')).startsWith('{')).to.equal(true);
    await a.state.keys.set({ 'pre-key': { '9': got }, session: { 'x.0': session } });
    expect((await opened(id, 'pre-key', '9')).startsWith('~k')).to.equal(true);
    expect((await opened(id, 'session', 'x.0')).startsWith('~b')).to.equal(true);
    expect(encryption.isSealed((await redis.hget(keys.authKeys(id, 'pre-key'), '9'))!)).to.equal(true);
    const b = await loadAuthState({ redis, encryption, deviceId: id, epoch: () => lease.epoch });
    const again = (await b.state.keys.get('pre-key', ['9']))['9']!;
    expect(Buffer.from(again.private).equals(pair.private)).to.equal(true);
    expect(Buffer.from((await b.state.keys.get('session', ['x.0']))['x.0']!).equals(session)).to.equal(true);
  });

  it('When a pre-key is stored, then it takes under 3/4 of what its JSON took, sealed', () => {
    const pair = { private: randomBytes(32), public: randomBytes(32) };
    const ctx = storageContext(keys.authKeys('d', 'pre-key'), '1');
    const compact = encryption.sealText(encodeAuthValue(pair), ctx).length;
    const json = encryption.sealText(JSON.stringify(pair, BufferJSON.replacer), ctx).length;
    expect(compact).to.be.below(json * 0.75);
  });

  it('When a value is not exactly a 32-byte key pair or bytes, then it stays JSON and reads back whole', () => {
    const odd = [
      { private: randomBytes(32), public: randomBytes(32), keyId: 3 },
      { private: randomBytes(16), public: randomBytes(32) },
      { token: randomBytes(8), timestamp: '7' },
      ['0', '3'],
      'text',
    ];
    for (const v of odd) {
      const text = encodeAuthValue(v);
      expect(text.startsWith('~')).to.equal(false);
      expect(decodeAuthValue(text)).to.deep.equal(v);
    }
    const u8 = new Uint8Array(randomBytes(40));
    expect(Buffer.from(decodeAuthValue(encodeAuthValue(u8)) as Buffer)).to.deep.equal(Buffer.from(u8));
  });
});
