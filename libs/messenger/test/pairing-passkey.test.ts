import { expect } from 'chai';
import { once } from 'node:events';
import { Redis } from 'ioredis';
import type { WASocket } from '@whiskeysockets/baileys';
import { startSimulator, type SimulatorHandle } from '@mgw/messenger-sim';
import { keys } from '@mgw/contracts';
import { createLogger } from '@mgw/common';
import { Encryption } from '@mgw/store';
import { SoftwareAuthenticator } from '@mgw/testing';
import {
  LeaseManager,
  PairingSession,
  enableSandbox,
  type PasskeyState,
  type SandboxSocketOptions,
} from '../src/index.js';

/**
 * A pairing socket (real Baileys, patched) meeting an account a passkey guards, against the
 * simulator's gate: the link waits for the passkey past the QRs' life; Baileys rc14 as published
 * (without the patch's listener and ours) ends the same link with 408 instead.
 */
/** How long each QR lives here (the simulator hands out six refs). */
const QR_MS = 1500;

describe('messenger: pairing a passkey-gated account (real Baileys against the simulator)', function () {
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

  async function control(path: string, body: unknown): Promise<void> {
    const res = await fetch(`${sim.controlUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  }

  /** A pairing whose QRs live 1.5 s each (Baileys' six refs run out within 9 s). */
  async function gatedPairing(phone: string) {
    const passkey = new SoftwareAuthenticator();
    await control(`/accounts/${phone}/passkey/gate`, { gate: 'qr' });
    await control(`/accounts/${phone}/passkey/authenticator`, {
      credentialId: passkey.credentialId.toString('base64url'),
      publicKey: passkey.spki,
    });
    const deviceId = `pkpair-${Math.random().toString(36).slice(2, 8)}`;
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
      qrMaxAttempts: 20,
      qrTimeoutMs: QR_MS,
    });
    return session;
  }

  /** The phone scans the first QR; resolves once the simulator asked for the passkey. */
  async function scan(firstQr: Promise<unknown[]>, phone: string): Promise<void> {
    const [qr] = (await firstQr) as [string];
    // A gated account's link answers once the phone asked for the passkey.
    await control('/phone/link', { qr, phone, name: 'Gated' });
  }

  it('When a gated account scans the QR, then the pairing waits for its passkey past the QRs’ life instead of ending', async () => {
    const phone = '15550810001';
    const session = await gatedPairing(phone);
    const failures: string[] = [];
    session.on('failed', ({ reason }) => failures.push(reason));
    const waiting = once(session, 'passkey');
    const firstQr = once(session, 'qr');
    await session.start();
    await scan(firstQr, phone);
    const [state] = (await waiting) as [PasskeyState];
    expect(state.step).to.equal('assertion');
    let qrsAfter = 0;
    session.on('qr', () => qrsAfter++);
    // Baileys' remaining refs would have run out by now.
    await new Promise((r) => setTimeout(r, 7 * QR_MS));
    expect(failures, 'the pairing still runs').to.deep.equal([]);
    expect(qrsAfter, 'no QR turns while the passkey is asked').to.equal(0);
    await session.cancel('test');
  });

  it('When Baileys rc14 meets the same account (no passkey support: the patch’s listener and ours removed), then the link ends with 408 when its QRs run out', async () => {
    const phone = '15550810002';
    const session = await gatedPairing(phone);
    const failed = once(session, 'failed');
    const firstQr = once(session, 'qr');
    await session.start();
    const sock = (session as unknown as { sock: WASocket }).sock;
    sock.ws.removeAllListeners('CB:notification,type:passkey_prologue_request');
    await scan(firstQr, phone).catch(() => undefined);
    const [{ reason }] = (await failed) as [{ reason: string }];
    // Baileys ended the socket with 408 "QR refs attempts ended" (our bound of 20 QRs is further).
    expect(reason).to.equal('qr_timeout');
  });
});
