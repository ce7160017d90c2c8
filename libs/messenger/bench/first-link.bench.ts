/**
 * First links of ungated accounts (docs/passkeys.md, "Performance"): a pairing socket (real
 * Baileys, `PairingSession`) shows its QR, the simulator's phone scans it, and the pairing ends
 * `paired`. Three sides take turns, the order rotating each round (libs/testing side-by-side.ts),
 * so all meet the same machine: the pairing with its passkey listeners taken off the socket right
 * after it opened (what an ungated link did before passkey support; the baseline), the same again
 * (the control: the noise floor), and the pairing as it is. Printed: each side's median time from
 * start to `paired` and this process's CPU per link, the ratios with ÷ without, and the control's.
 * Nothing is asserted. BENCH_LINKS links per turn (default 8), BENCH_ROUNDS rounds (default 6,
 * rounded up to a multiple of the sides).
 */
import { once } from 'node:events';
import { Redis } from 'ioredis';
import type { WASocket } from '@whiskeysockets/baileys';
import { startSimulator } from '@mgw/messenger-sim';
import { keys } from '@mgw/contracts';
import { createLogger } from '@mgw/common';
import { Encryption } from '@mgw/store';
import { median, SideBySide } from '@mgw/testing';
import { LeaseManager, PairingSession, enableSandbox } from '../src/index.js';

const LINKS = Number(process.env.BENCH_LINKS ?? 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const PASSKEY_EVENTS = [
  'CB:notification,type:passkey_prologue_request',
  'CB:notification,type:crsc_continuation',
];

const redis = new Redis(process.env.REDIS_URL!);
const sim = await startSimulator({ port: 0 });
const logger = createLogger({ level: 'silent', service: 'bench' });
const sandbox = await enableSandbox(sim.controlUrl, logger);
const encryption = Encryption.fromEnv();
let n = 0;
const devices: string[] = [];

async function link(withPasskey: boolean): Promise<number> {
  const i = n++;
  const deviceId = `firstlink-${i}`;
  devices.push(deviceId);
  const lease = (await new LeaseManager(redis, 'bench', 60_000).acquire(deviceId))!;
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
  const started = performance.now();
  const firstQr = once(session, 'qr');
  const paired = once(session, 'paired');
  await session.start();
  if (!withPasskey) {
    const sock = (session as unknown as { sock: WASocket }).sock;
    for (const event of PASSKEY_EVENTS) sock.ws.removeAllListeners(event);
  }
  const [qr] = (await firstQr) as [string];
  await sim.linkWithQr({ qr, phone: `1555860${String(i).padStart(4, '0')}`, name: 'Bench' });
  await paired;
  return performance.now() - started;
}

// Warm-up (JIT, first sockets), not counted.
await Promise.all(Array.from({ length: 2 }, () => link(true)));
const rounds = new SideBySide<'without' | 'control' | 'with'>({
  baseline: 'without',
  control: 'control',
  others: ['with'],
  rounds: ROUNDS,
});
await rounds.run(async (side) => {
  const cpu = process.cpuUsage();
  const ms = await Promise.all(Array.from({ length: LINKS }, () => link(side === 'with')));
  const used = process.cpuUsage(cpu);
  return { ms: median(ms), cpu: (used.user + used.system) / 1000 / LINKS };
});
console.log(
  `${LINKS} links per turn; without: passkey listeners removed, control: the same again, with: as it is; ${rounds.describe()}`,
);
for (const line of rounds.report({ metric: 'ms', label: 'start to paired, median ms' })) console.log(line);
for (const line of rounds.report({ metric: 'cpu', label: 'CPU ms/link', digits: 1 })) console.log(line);

for (const d of devices) {
  const found = await redis.keys(keys.authPattern(d));
  if (found.length) await redis.del(...found);
  await redis.del(keys.lease(d), keys.leaseEpoch(d));
}
await sim.close();
await redis.quit();
