import { expect } from 'chai';
import { Redis } from 'ioredis';
import { startSimulator, type SimulatorHandle } from '@mgw/messenger-sim';
import { ERRORS, keys, type ConnectRequest } from '@mgw/contracts';
import { createLogger } from '@mgw/common';
import { Encryption, readPairing, SessionStore } from '@mgw/store';
import { LeaseManager, enableSandbox, type SandboxSocketOptions } from '@mgw/messenger';
import { waitFor } from '@mgw/testing';
import type { ConnectionConfig } from '../src/config.js';
import { Liveness } from '../src/liveness.js';
import { PairingManager } from '../src/pairing-manager.js';

interface Replica {
  name: string;
  pairing: PairingManager;
  liveness: Liveness;
  subscriber: Redis;
}

describe('connection: pairings across two replicas (real Baileys, simulator, real Redis)', function () {
  this.timeout(60_000);
  let redis: Redis;
  let sim: SimulatorHandle;
  let sandbox: SandboxSocketOptions;
  let a: Replica;
  let b: Replica;
  let disconnecting = false;
  const logger = createLogger({ level: 'silent', service: 'test' });
  const config = {
    messenger: { lease: { ttlMs: 5_000, renewMs: 500 } },
    store: { messageRetentionSeconds: 60 },
    qrMaxAttempts: 5,
  } as ConnectionConfig;

  async function replica(name: string): Promise<Replica> {
    const leases = new LeaseManager(redis, `connection:${name}`, config.messenger.lease.ttlMs);
    const liveness = new Liveness(redis, leases.owner, logger);
    await liveness.start();
    const pairing = new PairingManager({
      config,
      logger,
      redis,
      encryption: Encryption.fromEnv(),
      leases,
      sessions: new SessionStore(redis),
      liveness,
      disconnecting: async () => disconnecting,
      sandbox,
    });
    const subscriber = redis.duplicate();
    await pairing.listen(subscriber);
    return { name, pairing, liveness, subscriber };
  }

  const qr = (deviceId: string, extra: Partial<ConnectRequest> = {}): ConnectRequest => ({
    action: 'connect',
    deviceId,
    method: 'qrCode',
    forceNew: false,
    rawQrCode: true,
    ...extra,
  });
  const fresh = () => `rp-${Math.random().toString(36).slice(2, 8)}`;

  before(async () => {
    redis = new Redis(process.env.REDIS_URL!);
    sim = await startSimulator({ port: 0 });
    sandbox = await enableSandbox(sim.controlUrl, logger);
    [a, b] = [await replica('a'), await replica('b')];
  });
  afterEach(async () => {
    disconnecting = false;
    await Promise.all([a.pairing.stopAll(), b.pairing.stopAll()]);
  });
  after(async () => {
    for (const r of [a, b]) {
      await r.liveness.stop();
      await r.subscriber.quit();
    }
    await sim.close();
    await redis.quit();
  });

  it('When two replicas get a connect for one device at once, then both answer the same QR at once and only one opens a socket', async () => {
    const deviceId = fresh();
    const started = Date.now();
    const [ra, rb] = await Promise.all([a.pairing.connect(qr(deviceId)), b.pairing.connect(qr(deviceId))]);
    const elapsed = Date.now() - started;
    expect(ra).to.include({ success: true, status: 'connecting' });
    expect(rb.qrCode).to.be.a('string').and.equal(ra.qrCode);
    expect(elapsed, 'both answered (ms)').to.be.lessThan(5000); // quiet: 250 ms
    expect(a.pairing.active + b.pairing.active, 'pairing sockets').to.equal(1);
  });

  it('When another replica pairs by pairing code, then a connect for another phone number or method is 409 and one for the same number answers the same code', async () => {
    const deviceId = fresh();
    const byCode = qr(deviceId, { method: 'pairingCode', phoneNumber: '15550700001' });
    const first = await a.pairing.connect(byCode);
    expect(first.pairingCode).to.match(/^[A-Z0-9]{8}$/);
    expect(await b.pairing.connect(byCode)).to.deep.include({ pairingCode: first.pairingCode });
    for (const other of [{ ...byCode, phoneNumber: '15550700002' }, qr(deviceId)]) {
      expect(await b.pairing.connect(other)).to.deep.equal({
        success: false,
        error: ERRORS.pairingOtherMethod,
        httpStatus: 409,
      });
    }
  });

  it('When forceNew reaches the replica that does not hold the pairing, then the other ends its pairing and a fresh QR is answered', async () => {
    const deviceId = fresh();
    const old = await a.pairing.connect(qr(deviceId));
    expect(a.pairing.active).to.equal(1);
    const renewed = await b.pairing.connect(qr(deviceId, { forceNew: true }));
    expect(renewed).to.include({ success: true, status: 'connecting' });
    expect(renewed.qrCode).to.be.a('string').and.not.equal(old.qrCode);
    expect([a.pairing.active, b.pairing.active]).to.deep.equal([0, 1]);
    expect(await readPairing(redis, deviceId)).to.include({ owner: 'connection:b', state: 'showing' });
  });

  it('When a disconnect on one replica ends the pairing of another, then that pairing is gone and its session disconnected', async () => {
    const deviceId = fresh();
    await a.pairing.connect(qr(deviceId));
    const ended = await b.pairing.cancelAnywhere(deviceId, 'disconnect_requested');
    expect(ended).to.be.a('string');
    expect(a.pairing.active).to.equal(0);
    expect(await readPairing(redis, deviceId)).to.include({
      state: 'failed',
      reason: 'disconnect_requested',
    });
    expect((await new SessionStore(redis).get(deviceId)).status).to.equal('disconnected');
    expect(await redis.exists(keys.lease(deviceId))).to.equal(0);
  });

  it('When a disconnect began just before the pairing started, then the connect answers 409 (a client race) and no pairing stays open', async () => {
    const deviceId = fresh();
    disconnecting = true;
    const reply = await a.pairing.connect(qr(deviceId));
    expect(reply).to.deep.equal({
      success: false,
      error: ERRORS.pairingCancelledByDisconnect,
      httpStatus: 409,
    });
    await waitFor(() => a.pairing.active === 0, { what: 'the pairing ended' });
  });

  it('When the replica holding a pairing stops announcing itself, then its record is stale and a connect waits for the lease and pairs afresh', async () => {
    const deviceId = fresh();
    // A pairing record and lease of a replica that died (it never announced itself).
    const epoch = await redis.incr(keys.leaseEpoch(deviceId));
    await redis.set(keys.lease(deviceId), JSON.stringify({ owner: 'connection:dead', epoch }), 'PX', 1500);
    await redis.hset(keys.pairing(deviceId), {
      pairingId: 'dead-pairing',
      owner: 'connection:dead',
      method: 'qrCode',
      phone: '',
      state: 'showing',
      qr: 'stale-qr',
      startedAt: String(Date.now()),
    });
    const reply = await b.pairing.connect(qr(deviceId));
    expect(reply.qrCode).to.be.a('string').and.not.equal('stale-qr');
    expect(await readPairing(redis, deviceId)).to.include({ owner: 'connection:b' });
  });
});
