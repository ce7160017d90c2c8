import { expect } from 'chai';
import { once } from 'node:events';
import { Redis } from 'ioredis';
import { startSimulator, type SimulatorHandle } from '@mgw/messenger-sim';
import { keys } from '@mgw/contracts';
import { createLogger } from '@mgw/common';
import { Encryption } from '@mgw/store';
import {
  LeaseManager,
  PairingSession,
  enableSandbox,
  hasLinkedCredentials,
  type PairedAccount,
  type SandboxSocketOptions,
} from '../src/index.js';

describe('messenger: pairing socket against the simulator (real Baileys, real Redis)', function () {
  this.timeout(60_000);
  let redis: Redis;
  let sim: SimulatorHandle;
  let sandbox: SandboxSocketOptions;
  const logger = createLogger({ level: 'silent', service: 'test' });
  const encryption = Encryption.fromEnv();
  const devices: string[] = [];

  before(async () => {
    redis = new Redis(process.env.REDIS_URL!);
    sim = await startSimulator({ port: 0 });
    sandbox = await enableSandbox(sim.controlUrl, logger);
  });
  after(async () => {
    for (const d of devices) {
      const found = await redis.keys(keys.authPattern(d));
      if (found.length) await redis.del(...found);
      await redis.del(keys.lease(d), keys.leaseEpoch(d));
    }
    await sim.close();
    await redis.quit();
  });

  async function pairing(qrMaxAttempts: number, qrTimeoutMs?: number) {
    const deviceId = `pair-${Math.random().toString(36).slice(2, 8)}`;
    devices.push(deviceId);
    const lease = (await new LeaseManager(redis, 'test', 30_000).acquire(deviceId))!;
    const session = new PairingSession({
      redis,
      encryption,
      logger,
      deviceId,
      sandbox,
      messageRetentionSeconds: 60,
      epoch: () => lease.epoch,
      method: 'qrCode',
      qrMaxAttempts,
      qrTimeoutMs,
    });
    return { deviceId, session };
  }

  it('When no phone scans and the QR attempts run out, then the pairing fails with qr_attempts_exhausted', async () => {
    const { deviceId, session } = await pairing(2, 300);
    const qrs: string[] = [];
    session.on('qr', (qr) => qrs.push(qr));
    const failed = once(session, 'failed');
    await session.start();
    const [{ reason }] = (await failed) as [{ reason: string }];
    expect(reason).to.equal('qr_attempts_exhausted');
    expect(qrs).to.have.length(2);
    expect(new Set(qrs).size).to.equal(2);
    expect(await hasLinkedCredentials(redis, deviceId, encryption)).to.equal(false);
  });

  it('When the phone scans the QR, then the session reports the paired phone and the credentials are linked', async () => {
    const { deviceId, session } = await pairing(5);
    const firstQr = once(session, 'qr');
    const paired = once(session, 'paired');
    await session.start();
    const [qr] = (await firstQr) as [string];
    await sim.linkWithQr({ qr, phone: '15550800001', name: 'Paired' });
    const [account] = (await paired) as [PairedAccount];
    expect(account.phone).to.equal('15550800001');
    expect(await hasLinkedCredentials(redis, deviceId, encryption)).to.equal(true);
  });
});
