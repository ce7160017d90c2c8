/**
 * The whole gateway against one bare Baileys socket, measured in the same run.
 *
 * - gateway: ROUNDS lists of the same C contacts through POST /send (API → Redis → BullMQ → a
 *   sender process with the Redis auth state, leases, acks and records; pacing off), until every
 *   contact has decrypted every message;
 * - baseline: the same number of texts to C other contacts from a bare Baileys socket in this
 *   process (in-memory auth state, the sender's 8 sends in flight, nothing recorded).
 *
 * Signal sessions with every contact are set up by a warm-up round first, then each side sends one
 * whole run unmeasured (BENCH_WARMUP_RUNS, 1): both measure steady sending by warm processes, not
 * session setup nor V8 still compiling the code (the sender starts cold, while the bare socket's
 * code is largely the simulator's, already hot). Both go through the same simulator. The ratio
 * gateway/baseline is the price of durability (records, acks, leases, fenced key writes); it is
 * reported, never asserted.
 *
 * The two runs alternate BENCH_REPEATS times (gateway, bare, bare, gateway, …), so a change in
 * the machine's load during the run weighs on both sides; each pair's ratio and the ratio of the
 * totals are printed. Beside the rates, the CPU time of each process per message (Linux, from
 * /proc): the sender, the API, the connection service and Redis during the gateway's runs; this
 * process (the simulator and the polling; the bare socket too in the bare runs) during both. The
 * bare socket's own CPU is not told apart from the simulator's here (the simulator's share differs
 * between the runs: woken in short bursts by the gateway, it costs more per message); the fleet
 * bench measures it in a process of its own. Beside them, the Redis commands per message (INFO
 * commandstats, every process's, the scripts' own calls included).
 *
 * The services run built, as `npm start` runs them (run `npm run build` first; a missing or stale
 * build stops the bench); BENCH_SOURCES=1 runs them through tsx from the sources.
 */
import os from 'node:os';
import { processCpuMs, Stack, TestDevice, waitFor } from '@mgw/testing';

const CONTACTS = Number(process.env.BENCH_CONTACTS ?? 50);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 8);
const REPEATS = Math.max(1, Number(process.env.BENCH_REPEATS ?? 2));
const WARMUP_RUNS = Math.max(0, Number(process.env.BENCH_WARMUP_RUNS ?? 1));
const IN_FLIGHT = 8; // the sender's worker concurrency when pacing is off

/** CPU time (user + system, s) a process has used so far; Linux only (NaN elsewhere). */
const cpuSeconds = (pid: number | undefined): number => processCpuMs(pid) / 1000;
const selfCpuSeconds = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

/**
 * Redis's own count of calls per command (INFO commandstats), scripts' inner calls included, and
 * of the reads it processed (`reads`: the clients' writes, each carrying one or more commands).
 */
async function commandStats(): Promise<{ calls: Map<string, number>; reads: number }> {
  const info = await stack.redis.info('commandstats');
  const stats = await stack.redis.info('stats');
  return {
    calls: new Map(
      [...info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)].map((m): [string, number] => [
        m[1]!,
        Number(m[2]),
      ]),
    ),
    reads: Number(/^total_reads_processed:(\d+)/m.exec(stats)?.[1] ?? NaN),
  };
}

// The services run as `npm start` runs them, built (no tsx loader or source maps in the sender);
// BENCH_SOURCES=1 runs them from the sources instead.
const stack = await Stack.start({ env: { LOG_LEVEL: 'warn' }, built: process.env.BENCH_SOURCES !== '1' });
try {
  await stack.linkByQr('15557770001', 'Bench Gateway');
  const gatewayTo = Array.from({ length: CONTACTS }, (_, i) => `1555778${String(i).padStart(4, '0')}`);
  const rawTo = Array.from({ length: CONTACTS }, (_, i) => `1555779${String(i).padStart(4, '0')}`);
  const received = (to: string[], count: number) => () => to.every((p) => stack.sim.inbox(p).length >= count);
  const total = CONTACTS * ROUNDS;
  const byName = (name: string) => stack.processes.find((p) => p.name.startsWith(name))?.child.pid;
  const redisPid = Number(/process_id:(\d+)/.exec(await stack.redis.info('server'))?.[1]);
  const pids = {
    sender: byName('sender'),
    api: byName('api'),
    connection: byName('connection'),
    redis: redisPid,
  };

  // gateway: warm-up round (sessions); each run sends ROUNDS lists back to back
  await stack.api('POST', '/send', { to: gatewayTo, text: 'warm-up' });
  await waitFor(received(gatewayTo, 1), { timeoutMs: 120_000, intervalMs: 50, what: 'gateway warm-up' });
  let gatewayRuns = 0;
  const commandCalls = new Map<string, number>();
  let reads = 0;
  const gatewayCpu = { sender: 0, api: 0, connection: 0, redis: 0, bench: 0 };
  const gatewayRun = async () => {
    const cpu0 = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuSeconds(pid)]));
    const self0 = selfCpuSeconds();
    const stats0 = await commandStats();
    const t0 = performance.now();
    for (let r = 0; r < ROUNDS; r++) {
      const res = await stack.api('POST', '/send', { to: gatewayTo, text: `round ${gatewayRuns}.${r}` });
      if (res.status !== 202) throw new Error(`send: ${res.status} ${JSON.stringify(res.body)}`);
    }
    gatewayRuns++;
    await waitFor(received(gatewayTo, 1 + ROUNDS * gatewayRuns), {
      timeoutMs: 300_000,
      intervalMs: 20,
      what: 'gateway rounds',
    });
    const seconds = (performance.now() - t0) / 1000;
    gatewayCpu.bench += selfCpuSeconds() - self0;
    const stats1 = await commandStats();
    for (const [name, calls] of stats1.calls)
      commandCalls.set(name, (commandCalls.get(name) ?? 0) + calls - (stats0.calls.get(name) ?? 0));
    reads += stats1.reads - stats0.reads;
    for (const [k, pid] of Object.entries(pids))
      gatewayCpu[k as keyof typeof pids] += cpuSeconds(pid) - cpu0[k]!;
    return seconds;
  };

  // baseline: a bare socket, same warm-up, same number of texts, same concurrency
  const device = new TestDevice(stack.sim.info);
  device.connect();
  const qr = await device.nextQr();
  const opened = device.waitForOpen(20_000);
  await stack.sim.linkWithQr({ qr, phone: '15557770002', name: 'Bench Raw' });
  await opened;
  const sock = device.sock!;
  const sendAll = async (text: (i: number) => string, count: number) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (next < count) {
          const i = next++;
          await sock.sendMessage(`${rawTo[i % CONTACTS]!}@s.whatsapp.net`, { text: text(i) });
        }
      }),
    );
  };
  await sendAll(() => 'warm-up', CONTACTS);
  await waitFor(received(rawTo, 1), { timeoutMs: 120_000, intervalMs: 50, what: 'raw warm-up' });
  let bareRuns = 0;
  let bareCpu = 0;
  const bareRun = async () => {
    const self0 = selfCpuSeconds();
    const t1 = performance.now();
    await sendAll((i) => `round ${bareRuns}.${Math.floor(i / CONTACTS)}`, total);
    bareRuns++;
    await waitFor(received(rawTo, 1 + ROUNDS * bareRuns), {
      timeoutMs: 300_000,
      intervalMs: 20,
      what: 'raw rounds',
    });
    bareCpu += selfCpuSeconds() - self0;
    return (performance.now() - t1) / 1000;
  };

  for (let i = 0; i < WARMUP_RUNS; i++) {
    await gatewayRun();
    await bareRun();
  }
  // measured from here
  for (const k of Object.keys(gatewayCpu)) gatewayCpu[k as keyof typeof gatewayCpu] = 0;
  bareCpu = 0;
  commandCalls.clear();
  reads = 0;
  // ABBA: gateway, bare, bare, gateway, …
  const pairs: { gateway: number; bare: number }[] = [];
  for (let i = 0; i < REPEATS; i++) {
    if (i % 2 === 0) {
      const gateway = await gatewayRun();
      pairs.push({ gateway, bare: await bareRun() });
    } else {
      const bare = await bareRun();
      pairs.push({ gateway: await gatewayRun(), bare });
    }
  }
  await device.end();

  const rate = (seconds: number) => total / seconds;
  console.log(
    `${total} texts per run (${ROUNDS} rounds × ${CONTACTS} contacts with sessions set up; pacing off), ` +
      `until decrypted; ${WARMUP_RUNS} unmeasured and ${REPEATS} measured runs each, alternating; ${process.version}; ` +
      `load average ${os.loadavg()[0]!.toFixed(1)} on ${os.cpus().length} cores`,
  );
  pairs.forEach((p, i) =>
    console.log(
      `  run ${i + 1}: bare socket ${rate(p.bare).toFixed(0)} msg/s, gateway ${rate(p.gateway).toFixed(0)} msg/s: ` +
        `${(p.bare / p.gateway).toFixed(2)}x`,
    ),
  );
  const gatewaySeconds = pairs.reduce((s, p) => s + p.gateway, 0);
  const bareSeconds = pairs.reduce((s, p) => s + p.bare, 0);
  console.log(`  bare Baileys socket (baseline): ${rate(bareSeconds / REPEATS).toFixed(0)} msg/s`);
  console.log(`  whole gateway (POST /send):     ${rate(gatewaySeconds / REPEATS).toFixed(0)} msg/s`);
  console.log(`  ratio gateway/baseline: ${(bareSeconds / gatewaySeconds).toFixed(2)}x`);
  const messages = total * REPEATS;
  const ms = (s: number) => `${((s / messages) * 1000).toFixed(2)} ms`;
  console.log(
    `  CPU per message, gateway runs: sender ${ms(gatewayCpu.sender)}, API ${ms(gatewayCpu.api)}, ` +
      `connection ${ms(gatewayCpu.connection)}, Redis ${ms(gatewayCpu.redis)}, this process (simulator, ` +
      `polling) ${ms(gatewayCpu.bench)}; bare runs: this process (simulator, bare socket, polling) ${ms(bareCpu)}`,
  );
  const perMessage = [...commandCalls]
    .filter(([, calls]) => calls > 0)
    .sort((a, b) => b[1] - a[1])
    .map(([name, calls]) => `${name} ${(calls / messages).toFixed(2)}`);
  const allCalls = [...commandCalls.values()].reduce((s, c) => s + c, 0);
  console.log(
    `  Redis commands per message, gateway runs (all processes, scripts' inner calls included): ` +
      `${(allCalls / messages).toFixed(1)} — ${perMessage.join(', ')}`,
  );
  console.log(
    `  Redis reads per message, gateway runs (the clients' writes, each with one or more commands; ` +
      `every process's, lease renewals and heartbeats included): ${(reads / messages).toFixed(2)}`,
  );
} finally {
  await stack.stop();
}
process.exit(0);
