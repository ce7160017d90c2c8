import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { BufferJSON, initAuthCreds, proto } from '@whiskeysockets/baileys';
import { startSimulator, type SimulatorHandle } from '@mgw/messenger-sim';
import { createLogger } from '@mgw/common';
import { keys } from '@mgw/contracts';
import { Encryption, EncryptionKey, SealedValueError, reencrypt } from '@mgw/store';
import { waitFor } from '@mgw/testing';
import {
  DeviceSocket,
  LeaseManager,
  MessageProtoStore,
  PairingSession,
  enableSandbox,
  loadAuthState,
  type RedisAuthState,
} from '../src/index.js';

/** Every byte Redis holds for a device's credentials and keys (as a dump would show them). */
async function dumpAuth(redis: Redis, deviceId: string): Promise<Buffer> {
  const parts: Buffer[] = [];
  for (const key of await redis.keys(keys.authPattern(deviceId))) {
    if ((await redis.type(key)) === 'hash') {
      for (const [field, value] of Object.entries(await redis.hgetallBuffer(key)))
        parts.push(Buffer.from(field), value);
    } else parts.push((await redis.getBuffer(key))!);
  }
  return Buffer.concat(parts);
}

/** The forms a secret takes in our JSON (BufferJSON writes base64), in logs (hex) and raw. */
function leaks(dump: Buffer, secret: Uint8Array): string[] {
  const bytes = Buffer.from(secret);
  const forms = { raw: bytes, base64: bytes.toString('base64'), hex: bytes.toString('hex') };
  return Object.entries(forms)
    .filter(([, form]) => dump.includes(form))
    .map(([name]) => name);
}

function privateKeys(auth: RedisAuthState): Record<string, Uint8Array> {
  const c = auth.state.creds;
  return {
    'noiseKey.private': c.noiseKey.private,
    'signedIdentityKey.private': c.signedIdentityKey.private,
    'signedPreKey.keyPair.private': c.signedPreKey.keyPair.private,
    'pairingEphemeralKeyPair.private': c.pairingEphemeralKeyPair.private,
    advSecretKey: Buffer.from(c.advSecretKey, 'base64'),
  };
}

describe('messenger: encryption at rest of auth state and message protos (real Redis)', function () {
  this.timeout(60_000);
  let redis: Redis;
  const encryption = Encryption.fromEnv();
  const logger = createLogger({ level: 'silent', service: 'test' });
  const devices: string[] = [];
  const device = (prefix: string) => {
    const id = `${prefix}-${randomBytes(4).toString('hex')}`;
    devices.push(id);
    return id;
  };
  before(() => {
    redis = new Redis(process.env.REDIS_URL!);
  });
  after(async () => {
    for (const d of devices) {
      const found = [
        ...(await redis.keys(keys.authPattern(d))),
        ...(await redis.keys(keys.messageProto(d, '*'))),
      ];
      if (found.length) await redis.del(...found);
      await redis.del(keys.lease(d), keys.leaseEpoch(d));
    }
    await redis.quit();
  });

  describe('a device linked through the simulator (real Baileys)', () => {
    let sim: SimulatorHandle;
    before(async () => {
      sim = await startSimulator({ port: 0 });
    });
    after(async () => sim.close());

    it('When a phone links the device, then no private key of the creds appears in Redis (raw, base64 or hex) and every value is sealed under the current key', async () => {
      const deviceId = device('rest');
      const lease = (await new LeaseManager(redis, 'test', 30_000).acquire(deviceId))!;
      const sandbox = await enableSandbox(sim.controlUrl, logger);
      const session = new PairingSession({
        redis,
        encryption,
        logger,
        deviceId,
        sandbox,
        messageRetentionSeconds: 60,
        epoch: () => lease.epoch,
        method: 'qrCode',
        qrMaxAttempts: 5,
      });
      const firstQr = once(session, 'qr');
      const paired = once(session, 'paired');
      await session.start();
      const [qr] = (await firstQr) as [string];
      await sim.linkWithQr({ qr, phone: '15550810001', name: 'At Rest' });
      await paired;
      // The long-lived socket logs in and uploads pre-keys: Signal keys are written too.
      const conn = new DeviceSocket({
        redis,
        encryption,
        logger,
        deviceId,
        sandbox,
        messageRetentionSeconds: 60,
        epoch: () => lease.epoch,
      });
      await conn.start();
      expect(await conn.waitForOpen(20_000)).to.equal(true);
      await waitFor(async () => (await redis.hlen(keys.authKeys(deviceId, 'pre-key'))) > 0, {
        timeoutMs: 10_000,
        what: 'pre-keys stored',
      });
      await conn.stop();

      const auth = await loadAuthState({ redis, encryption, deviceId, epoch: () => undefined });
      expect(auth.registered).to.equal(true);
      const dump = await dumpAuth(redis, deviceId);
      for (const [name, secret] of Object.entries(privateKeys(auth))) {
        expect(leaks(dump, secret), name).to.deep.equal([]);
      }
      const preKeys = await redis.hgetall(keys.authKeys(deviceId, 'pre-key'));
      const preKeyIds = Object.keys(preKeys);
      const stored = await auth.state.keys.get('pre-key', preKeyIds);
      for (const id of preKeyIds) expect(leaks(dump, stored[id]!.private), `pre-key ${id}`).to.deep.equal([]);
      expect(dump.includes('noiseKey')).to.equal(false);
      for (const [field, value] of Object.entries(preKeys)) {
        expect(encryption.keyIdOf(value), field).to.equal(encryption.currentKeyId);
      }
      expect(encryption.keyIdOf((await redis.get(keys.authCreds(deviceId)))!)).to.equal(
        encryption.currentKeyId,
      );
    });
  });

  it('When credentials are copied to another device or a key to another field, then they do not open there', async () => {
    const from = device('copy');
    const to = device('copy');
    const lease = (await new LeaseManager(redis, 'w', 5000).acquire(from))!;
    const a = await loadAuthState({ redis, encryption, deviceId: from, epoch: () => lease.epoch });
    await a.saveCreds();
    await a.state.keys.set({ session: { 'alice.0': randomBytes(16) } });
    await redis.set(keys.authCreds(to), (await redis.get(keys.authCreds(from)))!);
    const err = await loadAuthState({ redis, encryption, deviceId: to, epoch: () => undefined }).catch(
      (e) => e,
    );
    expect(err).to.be.instanceOf(SealedValueError).with.property('problem', 'authentication_failed');

    const sessions = keys.authKeys(from, 'session');
    await redis.hset(sessions, 'bob.0', (await redis.hget(sessions, 'alice.0'))!);
    const b = await loadAuthState({ redis, encryption, deviceId: from, epoch: () => undefined });
    const moved = await Promise.resolve(b.state.keys.get('session', ['bob.0'])).catch((e: unknown) => e);
    expect(moved).to.be.instanceOf(SealedValueError);
  });

  it('When the stored state is legacy plaintext, then it loads, and the next write seals it', async () => {
    const deviceId = device('legacy');
    const creds = initAuthCreds();
    await redis.set(keys.authCreds(deviceId), JSON.stringify(creds, BufferJSON.replacer));
    await redis.hset(
      keys.authKeys(deviceId, 'session'),
      'x.0',
      JSON.stringify(Buffer.from('old'), BufferJSON.replacer),
    );
    // the probe sees a plaintext key (so its silence on sealed values means something)
    expect(leaks(await dumpAuth(redis, deviceId), creds.noiseKey.private)).to.deep.equal(['base64']);
    const lease = (await new LeaseManager(redis, 'w', 5000).acquire(deviceId))!;
    const auth = await loadAuthState({ redis, encryption, deviceId, epoch: () => lease.epoch });
    expect(
      Buffer.from(auth.state.creds.noiseKey.private).equals(Buffer.from(creds.noiseKey.private)),
    ).to.equal(true);
    expect((await auth.state.keys.get('session', ['x.0']))['x.0']).to.deep.equal(Buffer.from('old'));
    await auth.saveCreds();
    expect(encryption.isSealed((await redis.get(keys.authCreds(deviceId)))!)).to.equal(true);
    expect(leaks(await dumpAuth(redis, deviceId), creds.noiseKey.private)).to.deep.equal([]);
  });

  it('When the key is rotated and reencrypt runs, then a device loads with the new key alone', async () => {
    const deviceId = device('rotate');
    const k1 = new EncryptionKey('rot1', randomBytes(32));
    const k2 = new EncryptionKey('rot2', randomBytes(32));
    const before = Encryption.fromConfig({ current: k1, old: [] });
    const lease = (await new LeaseManager(redis, 'w', 5000).acquire(deviceId))!;
    const a = await loadAuthState({ redis, encryption: before, deviceId, epoch: () => lease.epoch });
    await a.saveCreds();
    const preKey = { public: randomBytes(32), private: randomBytes(32) };
    await a.state.keys.set({ 'pre-key': { '7': preKey } });

    const rotated = Encryption.fromConfig({ current: k2, old: [k1] });
    // Only this device's keys: the shared test Redis holds other suites' values under other keys.
    const families = [
      { name: 'creds', pattern: keys.authCreds(deviceId), type: 'string', form: 'text' },
      { name: 'keys', pattern: keys.authKeys(deviceId, '*'), type: 'hash', form: 'text' },
    ] as const;
    const results = await reencrypt(redis, rotated, { families });
    expect(results.map((r) => r.rewritten)).to.deep.equal([1, 1]);

    const onlyNew = Encryption.fromConfig({ current: k2, old: [] });
    const b = await loadAuthState({ redis, encryption: onlyNew, deviceId, epoch: () => undefined });
    expect(Buffer.from(b.state.creds.noiseKey.private)).to.deep.equal(
      Buffer.from(a.state.creds.noiseKey.private),
    );
    // (pre-keys are not kept in the auth cache: the one written above is read back from Redis)
    expect(Buffer.from((await b.state.keys.get('pre-key', ['7']))['7']!.private)).to.deep.equal(
      preKey.private,
    );
  });

  it('When a message proto is saved, then Redis holds no text of it, it loads back, a shorter TTL can be asked for, and a legacy base64 proto still loads', async () => {
    const deviceId = device('proto');
    const store = new MessageProtoStore(redis, deviceId, 3600, encryption);
    const text = `Your code is ${randomBytes(4).readUInt32BE() % 1_000_000}`;
    await store.save('3EB0000001', { conversation: text });
    const raw = (await redis.getBuffer(keys.messageProto(deviceId, '3EB0000001')))!;
    expect(raw.includes(text)).to.equal(false);
    expect(raw.includes(Buffer.from(text).toString('base64').slice(0, 16))).to.equal(false);
    expect(encryption.keyIdOf(raw)).to.equal(encryption.currentKeyId);
    expect((await store.load('3EB0000001'))?.conversation).to.equal(text);
    expect(await redis.ttl(keys.messageProto(deviceId, '3EB0000001'))).to.be.within(3590, 3600);

    await store.save('3EB0000002', { conversation: 'otp' }, 120);
    expect(await redis.ttl(keys.messageProto(deviceId, '3EB0000002'))).to.be.within(110, 120);

    const legacy = Buffer.from(proto.Message.encode({ conversation: 'before encryption' }).finish());
    await redis.set(keys.messageProto(deviceId, '3EB0000003'), legacy.toString('base64'));
    expect((await store.load('3EB0000003'))?.conversation).to.equal('before encryption');

    // a proto moved to another message id does not open
    await redis.set(keys.messageProto(deviceId, '3EB0000004'), raw);
    expect(await store.load('3EB0000004').catch((e) => e)).to.be.instanceOf(SealedValueError);
  });
});
