/**
 * N real Baileys sockets in one process, as one sender holding N linked devices: how the event
 * loop and sending hold up as N grows. Each socket brings its own AsyncLocalStorage (see
 * async-context.bench.ts), so on Node 20 every await gets dearer with N; on Node 24 it should not.
 *
 * The simulator runs in its own process (its CPU is not this process's). Devices are linked by
 * QR through its control API; N grows through BENCH_SOCKETS (default 1,50,100) in one run, each
 * new device warming up its Signal session with its contact first. Then every socket sends
 * BENCH_MESSAGES texts (default 20) back to back, all sockets at once, with no pacing; before each
 * text it makes one Redis round trip (REDIS_URL, or a private redis-server), as the sender does for
 * every job: without any I/O between texts Baileys encrypts and writes them all in one turn of the
 * event loop, and lag would only measure the length of that turn. Printed per
 * N: time until every sendMessage resolved, aggregate msg/s and its ratio to N = 1, event-loop
 * lag p50/p99/max while sending and while idle, RSS, and this process's CPU time per text (steadier
 * than wall time on a shared machine). Nothing is asserted.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import type { SimulatorInfo } from '@mgw/messenger-sim';
import { TestDevice, startRedisServer } from '@mgw/testing';

const STEPS = (process.env.BENCH_SOCKETS ?? '1,50,100').split(',').map(Number);
const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 20);
const IDLE_MS = 3_000;
const TICK_MS = 10;
const account = (i: number) => `1555880${String(i).padStart(4, '0')}`;
const contact = (i: number) => `1555881${String(i).padStart(4, '0')}@s.whatsapp.net`;

const cli = fileURLToPath(new URL('../../../libs/messenger-sim/src/cli.ts', import.meta.url));
const sim = spawn(process.execPath, ['--conditions=development', '--import', 'tsx', cli], {
  env: { ...process.env, SANDBOX_PORT: '0' },
  stdio: ['ignore', 'pipe', 'inherit'],
});
const controlUrl = await new Promise<string>((resolve, reject) => {
  let out = '';
  sim.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    const match = /listening on (http:\/\/\S+)/.exec(out);
    if (match) resolve(match[1]!);
  });
  sim.once('exit', (code) => reject(new Error(`simulator exited with ${code}`)));
  setTimeout(() => reject(new Error('simulator did not start')), 20_000).unref();
});

async function api(method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${controlUrl}${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.json() as Promise<Record<string, unknown>>;
}

async function link(info: SimulatorInfo, i: number): Promise<TestDevice> {
  const device = new TestDevice(info);
  device.connect();
  const qr = await device.nextQr();
  const opened = device.waitForOpen(60_000);
  await api('POST', '/phone/link', { qr, phone: account(i), name: `Bench ${i}` });
  await opened;
  return device;
}

/**
 * Event-loop lag (ms past a 10 ms timer's due time) while `work` runs. A timer chain rather than
 * monitorEventLoopDelay: the histogram recorded nothing when the loop was blocked for the whole
 * send phase, while a block of seconds is exactly what this must show.
 */
async function withLag<T>(
  work: () => Promise<T>,
): Promise<{ value: T; p50: number; p99: number; max: number }> {
  const lags: number[] = [];
  let due = performance.now() + TICK_MS;
  const tick = () => {
    const now = performance.now();
    lags.push(Math.max(0, now - due));
    due = now + TICK_MS;
    timer = setTimeout(tick, TICK_MS);
  };
  let timer = setTimeout(tick, TICK_MS);
  const value = await work();
  clearTimeout(timer);
  lags.push(Math.max(0, performance.now() - due)); // a block lasting until the end
  lags.sort((a, b) => a - b);
  const at = (q: number) => lags[Math.min(lags.length - 1, Math.floor(q * lags.length))]!;
  return { value, p50: at(0.5), p99: at(0.99), max: lags[lags.length - 1]! };
}

const header =
  `${'sockets'.padStart(7)}${'send s'.padStart(9)}${'msg/s'.padStart(8)}${'ratio'.padStart(7)}` +
  `${'lag p50'.padStart(9)}${'p99'.padStart(8)}${'max'.padStart(8)}${'idle p99'.padStart(10)}` +
  `${'RSS MiB'.padStart(8)}${'setup s'.padStart(9)}${'CPU ms/msg'.padStart(12)}`;
const server = process.env.REDIS_URL ? undefined : await startRedisServer();
const redis = new Redis(process.env.REDIS_URL ?? server!.url);
await redis.set('bench:job', 'x');
const devices: TestDevice[] = [];
const rows: string[] = [];
let baseRate = 0;
let cpuAtStart = process.cpuUsage();
try {
  const info = (await api('GET', '/info')) as unknown as SimulatorInfo;
  console.log(`${process.version}: ${MESSAGES} texts per socket, all sockets at once, no pacing`);
  for (const target of STEPS) {
    const t0 = performance.now();
    const start = devices.length;
    // a few links at a time: the simulator and the machine are shared, and linking is not measured
    while (devices.length < target) {
      const batch = Array.from(
        { length: Math.min(4, target - devices.length) },
        (_, k) => devices.length + k,
      );
      devices.push(...(await Promise.all(batch.map((i) => link(info, i)))));
    }
    // device lists, prekey bundles and Signal sessions are set up here, not measured
    await Promise.all(
      devices.slice(start).map((d, k) => d.sock!.sendMessage(contact(start + k), { text: 'warm-up' })),
    );
    const setupSeconds = (performance.now() - t0) / 1000;

    const idle = await withLag(() => new Promise((r) => setTimeout(r, IDLE_MS)));
    const sending = await withLag(async () => {
      const t1 = performance.now();
      cpuAtStart = process.cpuUsage();
      await Promise.all(
        devices.map(async (d, i) => {
          for (let m = 0; m < MESSAGES; m++) {
            await redis.get('bench:job');
            await d.sock!.sendMessage(contact(i), { text: `bench ${m}` });
          }
        }),
      );
      return (performance.now() - t1) / 1000;
    });
    const cpu = process.cpuUsage(cpuAtStart);
    const cpuPerMessage = (cpu.user + cpu.system) / 1000 / (target * MESSAGES);
    const seconds = sending.value;
    const rate = (target * MESSAGES) / seconds;
    if (baseRate === 0) baseRate = rate;
    const rssMiB = process.memoryUsage().rss / 2 ** 20;
    rows.push(
      `${String(target).padStart(7)}${seconds.toFixed(2).padStart(9)}${rate.toFixed(0).padStart(8)}` +
        `${(rate / baseRate).toFixed(2).padStart(7)}` +
        `${sending.p50.toFixed(0).padStart(9)}${sending.p99.toFixed(0).padStart(8)}${sending.max.toFixed(0).padStart(8)}` +
        `${idle.p99.toFixed(0).padStart(10)}${rssMiB.toFixed(0).padStart(8)}${setupSeconds.toFixed(0).padStart(9)}` +
        `${cpuPerMessage.toFixed(2).padStart(12)}`,
    );
    console.log(`${rows[rows.length - 1]}   (${target} sockets done)`);
  }
  console.log(`\n${header}`);
  for (const row of rows) console.log(row);
  console.log(
    "ratio = aggregate msg/s against the first row; lag: ms past a 10 ms timer's due time (0 = none); " +
      "CPU: this process's user + system time while sending, per text (steadier than wall time when the " +
      'machine is shared)',
  );
} finally {
  await Promise.all(devices.map((d) => d.end()));
  sim.kill('SIGTERM');
  redis.disconnect();
  await server?.stop();
}
process.exit(0);
