/**
 * Text messages per second one Baileys socket pushes through the simulator, sequentially and
 * with many sends in flight. The simulator runs in its own process (as in sandbox mode) so the
 * client's CPU is measured apart from the server's. Prints the concurrent/sequential ratio.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import QRCode from 'qrcode';
import type { SimulatorInfo } from '../src/index.js';
import { TestDevice } from '@mgw/testing';

const SEQUENTIAL = Number(process.env.BENCH_SEQUENTIAL ?? 300);
const CONCURRENT = Number(process.env.BENCH_CONCURRENT ?? 1000);
const IN_FLIGHT = Number(process.env.BENCH_IN_FLIGHT ?? 50);
const ACCOUNT = '15559990001';
const CONTACT = '15559990002';
const jid = `${CONTACT}@s.whatsapp.net`;

const cli = fileURLToPath(new URL('../src/cli.ts', import.meta.url));
const child = spawn(process.execPath, ['--conditions=development', '--import', 'tsx', cli], {
  env: { ...process.env, SANDBOX_PORT: '0' },
  stdio: ['ignore', 'pipe', 'inherit'],
});
const controlUrl = await new Promise<string>((resolve, reject) => {
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    const match = /listening on (http:\/\/\S+)/.exec(out);
    if (match) resolve(match[1]!);
  });
  child.once('exit', (code) => reject(new Error(`simulator exited with ${code}`)));
  setTimeout(() => reject(new Error('simulator did not start')), 20_000).unref();
});

const api = async (
  method: string,
  path: string,
  body?: unknown,
  retry = true,
): Promise<Record<string, unknown>> => {
  let res: Response;
  try {
    res = await fetch(`${controlUrl}${path}`, {
      method,
      headers: { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (err) {
    // a reused keep-alive socket can be closed under us; one retry is enough
    if (retry && method === 'GET') return api(method, path, body, false);
    throw err;
  }
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.json() as Promise<Record<string, unknown>>;
};

const inboxCount = async () => ((await api('GET', `/inbox/${CONTACT}`)).messages as unknown[]).length;

/** Waits (bounded) until the contact decrypted `expected` messages; returns how many it has. */
const drain = async (expected: number): Promise<number> => {
  const deadline = Date.now() + 30_000;
  let arrived = await inboxCount();
  while (arrived < expected && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    arrived = await inboxCount();
  }
  return arrived;
};

try {
  const info = (await api('GET', '/info')) as unknown as SimulatorInfo;
  const device = new TestDevice(info);
  device.connect();
  const qr = await device.nextQr();
  const opened = device.waitForOpen(20_000);
  await api('POST', '/phone/link', { qr: await QRCode.toDataURL(qr), phone: ACCOUNT, name: 'Bench' });
  await opened;
  const sock = device.sock!;

  // warm-up: device lists, prekey bundles and the Signal session are set up here, not measured
  for (let i = 0; i < 20; i++) await sock.sendMessage(jid, { text: `warm-up ${i}` });

  let delivered = await inboxCount();
  const t0 = performance.now();
  for (let i = 0; i < SEQUENTIAL; i++) await sock.sendMessage(jid, { text: `sequential ${i}` });
  const sequentialSeconds = (performance.now() - t0) / 1000;
  delivered += SEQUENTIAL;
  await drain(delivered);

  let next = 0;
  const t1 = performance.now();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < CONCURRENT) {
        const i = next++;
        await sock.sendMessage(jid, { text: `concurrent ${i}` });
      }
    }),
  );
  const concurrentSeconds = (performance.now() - t1) / 1000;
  delivered += CONCURRENT;
  const arrived = await drain(delivered);
  const drainedSeconds = (performance.now() - t1) / 1000;

  const sequentialRate = SEQUENTIAL / sequentialSeconds;
  const concurrentRate = CONCURRENT / concurrentSeconds;
  console.log('messenger-sim throughput (one Baileys socket, in-memory auth state, text messages)');
  console.log(`  sequential:             ${sequentialRate.toFixed(0)} msg/s (${SEQUENTIAL} sends)`);
  console.log(`  ${IN_FLIGHT} in flight:          ${concurrentRate.toFixed(0)} msg/s (${CONCURRENT} sends)`);
  console.log(
    `  decrypted by recipient: ${arrived}/${delivered} within ${drainedSeconds.toFixed(1)} s of the concurrent start`,
  );
  console.log(`  ratio concurrent/sequential: ${(concurrentRate / sequentialRate).toFixed(2)}x`);
  await device.end();
} finally {
  child.kill('SIGTERM');
}
process.exit(0);
