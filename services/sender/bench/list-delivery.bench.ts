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
 * The runs take turns in BENCH_REPEATS rounds (3, rounded up to a multiple of the sides), the order
 * rotating each round (libs/testing side-by-side.ts), beside a control — a second bare socket of
 * an account of its own, to other contacts: the noise floor — so a change in the machine's load
 * during the run weighs on every side; the rates, gateway ÷ bare (the median of the rounds'
 * ratios) and the control's ratio are printed. Beside the rates, the CPU time of each process per message (Linux, from
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
import { processCpuMs, SideBySide, Stack, TestDevice, waitFor } from '@mgw/testing';

const CONTACTS = Number(process.env.BENCH_CONTACTS ?? 50);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 8);
const REPEATS = Math.max(1, Number(process.env.BENCH_REPEATS ?? 3));
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

  // baseline: a bare socket, same warm-up, same number of texts, same concurrency; the control, a
  // second bare socket of its own account to other contacts
  const bareSide = async (phone: string, prefix: string) => {
    const device = new TestDevice(stack.sim.info);
    device.connect();
    const qr = await device.nextQr();
    const opened = device.waitForOpen(20_000);
    await stack.sim.linkWithQr({ qr, phone, name: 'Bench Raw' });
    await opened;
    const sock = device.sock!;
    const to = Array.from({ length: CONTACTS }, (_, i) => `${prefix}${String(i).padStart(4, '0')}`);
    const sendAll = async (text: (i: number) => string, count: number) => {
      let next = 0;
      await Promise.all(
        Array.from({ length: IN_FLIGHT }, async () => {
          while (next < count) {
            const i = next++;
            await sock.sendMessage(`${to[i % CONTACTS]!}@s.whatsapp.net`, { text: text(i) });
          }
        }),
      );
    };
    await sendAll(() => 'warm-up', CONTACTS);
    await waitFor(received(to, 1), { timeoutMs: 120_000, intervalMs: 50, what: 'raw warm-up' });
    let runs = 0;
    const run = async () => {
      const self0 = selfCpuSeconds();
      const t1 = performance.now();
      await sendAll((i) => `round ${runs}.${Math.floor(i / CONTACTS)}`, total);
      runs++;
      await waitFor(received(to, 1 + ROUNDS * runs), {
        timeoutMs: 300_000,
        intervalMs: 20,
        what: 'raw rounds',
      });
      bareCpu += selfCpuSeconds() - self0;
      return (performance.now() - t1) / 1000;
    };
    return { device, run };
  };
  let bareCpu = 0;
  const bare = await bareSide('15557770002', '1555779');
  const control = await bareSide('15557770003', '1555780');

  for (let i = 0; i < WARMUP_RUNS; i++) {
    await gatewayRun();
    await bare.run();
    await control.run();
  }
  // measured from here
  for (const k of Object.keys(gatewayCpu)) gatewayCpu[k as keyof typeof gatewayCpu] = 0;
  bareCpu = 0;
  commandCalls.clear();
  reads = 0;
  const runs = { gateway: gatewayRun, bare: bare.run, control: control.run };
  const rounds = new SideBySide<keyof typeof runs>({
    baseline: 'bare',
    control: 'control',
    others: ['gateway'],
    rounds: REPEATS,
  });
  await rounds.run(async (side) => ({ rate: total / (await runs[side]()) }));
  await bare.device.end();
  await control.device.end();

  console.log(
    `${total} texts per run (${ROUNDS} rounds × ${CONTACTS} contacts with sessions set up; pacing off), ` +
      `until decrypted; ${WARMUP_RUNS} unmeasured runs each, then ${rounds.describe()} (bare: a bare Baileys ` +
      `socket; gateway: POST /send); ${process.version}; load average ${os.loadavg()[0]!.toFixed(1)} on ${os.cpus().length} cores`,
  );
  for (const line of rounds.report({ metric: 'rate', label: 'msg/s' })) console.log(`  ${line}`);
  const messages = total * rounds.rounds;
  const ms = (s: number, of = messages) => `${((s / of) * 1000).toFixed(2)} ms`;
  console.log(
    `  CPU per message, gateway runs: sender ${ms(gatewayCpu.sender)}, API ${ms(gatewayCpu.api)}, ` +
      `connection ${ms(gatewayCpu.connection)}, Redis ${ms(gatewayCpu.redis)}, this process (simulator, ` +
      `polling) ${ms(gatewayCpu.bench)}; bare and control runs: this process (simulator, bare socket, polling) ${ms(bareCpu, 2 * messages)}`,
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
