/**
 * First links of ungated accounts (docs/passkeys.md, "Performance"): a pairing socket (real
 * Baileys, `PairingSession`) shows its QR, the simulator's phone scans it, and the pairing ends
 * `paired`. Rounds alternate (ABBA) between the pairing as it is and the same pairing with its
 * passkey listeners taken off the socket right after it opened (what an ungated link did before
 * passkey support), so both meet the same machine; printed: the median time from start to
 * `paired` and this process's CPU per link of each, and their ratio (with ÷ without). Nothing is
 * asserted. BENCH_LINKS links per round (default 8), BENCH_ROUNDS rounds of each (default 4).
 */
import { once } from 'node:events';
import { Redis } from 'ioredis';
import type { WASocket } from '@whiskeysockets/baileys';
import { startSimulator } from '@mgw/messenger-sim';
import { keys } from '@mgw/contracts';
import { createLogger } from '@mgw/common';
import { Encryption } from '@mgw/store';
import { LeaseManager, PairingSession, enableSandbox } from '../src/index.js';

const LINKS = Number(process.env.BENCH_LINKS ?? 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
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

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const results = {
  with: { ms: [] as number[], cpu: 0, links: 0 },
  without: { ms: [] as number[], cpu: 0, links: 0 },
};
// Warm-up (JIT, first sockets), not counted.
await Promise.all(Array.from({ length: 2 }, () => link(true)));
for (let r = 0; r < ROUNDS * 2; r++) {
  // ABBA: with, without, without, with, …
  const withPasskey = r % 4 === 0 || r % 4 === 3;
  const side = withPasskey ? results.with : results.without;
  const cpu = process.cpuUsage();
  side.ms.push(...(await Promise.all(Array.from({ length: LINKS }, () => link(withPasskey)))));
  const used = process.cpuUsage(cpu);
  side.cpu += (used.user + used.system) / 1000;
  side.links += LINKS;
}
const row = (name: string, s: typeof results.with) =>
  `${name.padEnd(28)} median ${median(s.ms).toFixed(0).padStart(5)} ms   CPU ${(s.cpu / s.links).toFixed(1)} ms/link`;
console.log(row('with passkey support', results.with));
console.log(row('without (listeners removed)', results.without));
console.log(
  `ratio with ÷ without: time ${(median(results.with.ms) / median(results.without.ms)).toFixed(3)}, CPU ${(results.with.cpu / results.with.links / (results.without.cpu / results.without.links)).toFixed(3)}`,
);

for (const d of devices) {
  const found = await redis.keys(keys.authPattern(d));
  if (found.length) await redis.del(...found);
  await redis.del(keys.lease(d), keys.leaseEpoch(d));
}
await sim.close();
await redis.quit();
