import { expect } from 'chai';
import { once } from 'node:events';
import { Redis } from 'ioredis';
import { startSimulator, type SimulatorHandle } from '@mgw/messenger-sim';
import { keys } from '@mgw/contracts';
import { createLogger } from '@mgw/common';
import { Encryption } from '@mgw/store';
import { LeaseManager, PairingSession, enableSandbox, type SandboxSocketOptions } from '../src/index.js';

/** How long each QR lives here. */
const QR_MS = 800;

/**
 * WhatsApp may answer a registration socket with `<success>` before any pairing (whatsmeow 5f04eac6,
 * June 2026, ignores it). Baileys rc14 took it for a login: it stopped the QR timer (the QR on the
 * dashboard froze) and uploaded pre-keys for a device that does not exist. The Baileys patch ignores
 * a success while the credentials hold no signed identity (patches/README.md).
 */
describe('messenger: a connect success before the pairing completed (real Baileys against the simulator)', function () {
  this.timeout(60_000);
  let redis: Redis;
  let sim: SimulatorHandle;
  let sandbox: SandboxSocketOptions;
  const logger = createLogger({ level: 'silent', service: 'test' });
  const encryption = Encryption.fromEnv();
  const deviceId = `early-${Math.random().toString(36).slice(2, 8)}`;

  before(async () => {
    redis = new Redis(process.env.REDIS_URL!);
    sim = await startSimulator({ port: 0 });
    sandbox = await enableSandbox(sim.controlUrl, logger);
  });
  after(async () => {
    const found = await redis.keys(keys.authPattern(deviceId));
    if (found.length) await redis.del(...found);
    await redis.del(keys.lease(deviceId), keys.leaseEpoch(deviceId));
    await sim.close();
    await redis.quit();
  });

  async function control(path: string, body: unknown): Promise<void> {
    const res = await fetch(`${sim.controlUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  }

  it('When the server sends <success> right after the QR refs, then the QRs keep turning and a scan still links the device', async () => {
    await control('/faults/early-success', {});
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
      qrMaxAttempts: 20,
      qrTimeoutMs: QR_MS,
    });
    const qrs: string[] = [];
    session.on('qr', (qr: string) => qrs.push(qr));
    const failures: string[] = [];
    session.on('failed', ({ reason }: { reason: string }) => failures.push(reason));
    await session.start();
    // Baileys rc14 stopped the QR timer at the early success: one QR, then none.
    const deadline = Date.now() + 6 * QR_MS;
    while (qrs.length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(qrs.length, 'QRs after the early success').to.be.at.least(3);
    expect(failures).to.deep.equal([]);

    const paired = once(session, 'paired');
    await control('/phone/link', { qr: qrs.at(-1), phone: '15550700001', name: 'Early' });
    const [account] = (await paired) as [{ phone: string }];
    expect(account.phone).to.equal('15550700001');
  });
});
