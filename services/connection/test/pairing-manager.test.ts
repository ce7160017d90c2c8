import { expect } from 'chai';
import { Redis } from 'ioredis';
import { startSimulator, type SimulatorHandle } from '@mgw/messenger-sim';
import { keys } from '@mgw/contracts';
import { createLogger } from '@mgw/common';
import { Encryption, SessionStore } from '@mgw/store';
import type { ConnectionConfig } from '../src/config.js';
import { LeaseManager, enableSandbox, type SandboxSocketOptions } from '@mgw/messenger';
import { Liveness } from '../src/liveness.js';
import { PairingManager } from '../src/pairing-manager.js';

describe('connection: a pairing that loses its lease (real Baileys, simulator, real Redis)', function () {
  this.timeout(60_000);
  let redis: Redis;
  let sim: SimulatorHandle;
  let sandbox: SandboxSocketOptions;
  const logger = createLogger({ level: 'silent', service: 'test' });

  before(async () => {
    redis = new Redis(process.env.REDIS_URL!);
    sim = await startSimulator({ port: 0 });
    sandbox = await enableSandbox(sim.controlUrl, logger);
  });
  after(async () => {
    await sim.close();
    await redis.quit();
  });

  it("When another replica took the lease and started its own pairing, then the old pairing's clean-up leaves that replica's record and the session alone", async () => {
    const deviceId = `pm-${Math.random().toString(36).slice(2, 8)}`;
    const leases = new LeaseManager(redis, 'replica-a', 5_000);
    const sessions = new SessionStore(redis);
    const config = {
      messenger: { lease: { ttlMs: 5_000, renewMs: 100 } },
      store: { messageRetentionSeconds: 60 },
      qrMaxAttempts: 5,
    } as ConnectionConfig;
    const liveness = new Liveness(redis, 'replica-a', logger);
    await liveness.start();
    const pairing = new PairingManager({
      config,
      logger,
      redis,
      encryption: Encryption.fromEnv(),
      leases,
      sessions,
      liveness,
      disconnecting: async () => false,
      sandbox,
    });
    const reply = await pairing.connect({ action: 'connect', deviceId, method: 'qrCode' } as never);
    expect(reply).to.include({ success: true });
    expect(pairing.active).to.equal(1);

    // Replica B takes over (as after A's TTL ran out) and writes its own pairing record.
    const epoch = await redis.incr(keys.leaseEpoch(deviceId));
    await redis.set(keys.lease(deviceId), JSON.stringify({ owner: 'replica-b', epoch }), 'PX', 10_000);
    await redis.hset(keys.pairing(deviceId), {
      pairingId: 'pairing-b',
      method: 'qrCode',
      state: 'showing',
      qr: 'b-qr',
      owner: 'replica-b',
    });
    await sessions.update(deviceId, 'connecting');

    const deadline = Date.now() + 10_000;
    while (pairing.active > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(pairing.active, 'pairing A ended').to.equal(0);
    expect(await redis.hget(keys.pairing(deviceId), 'owner')).to.equal('replica-b');
    expect((await sessions.get(deviceId)).status).to.equal('connecting');
    expect(JSON.parse((await redis.get(keys.lease(deviceId)))!)).to.include({ owner: 'replica-b' });
    await liveness.stop();
    await redis.del(keys.pairing(deviceId), keys.lease(deviceId), keys.leaseEpoch(deviceId));
  });
});
