/**
 * What OpenTelemetry traces cost the sender and the API (issues 56 and 71), side by side in one
 * run: one stack per side as `npm start` runs them (built), the same but for the variables — `off`
 * (no OTLP endpoint: no SDK loaded), `ratio` (the 10 % the Kubernetes files ship,
 * `parentbased_traceidratio` 0.1), `on` (every trace sampled); BENCH_SIDES may name `unsampled`
 * (ratio 0); `control`, always there, is a second stack with tracing off: what two equal stacks
 * differ by, the noise floor. The traced ones export over OTLP/HTTP protobuf to a receiver in this
 * process; each stack has its own simulator and a linked device, pacing off. BENCH_REPEATS (4,
 * rounded up to a multiple of the sides) repeats, the order rotated by one each time
 * (libs/testing side-by-side.ts), each side's figure ÷ off's of the same repeat, the median:
 *
 * - accept: POST /send to one recipient, autocannon with BENCH_CONNECTIONS (10) for
 *   BENCH_SECONDS (5): the API's CPU per accepted request ÷ off's;
 * - send: BENCH_ROUNDS lists of BENCH_CONTACTS contacts until every contact has each: the sender's
 *   CPU (/proc) per message ÷ off's (issue 71's goals: ≤ 1.03 at 10 %, ≤ 1.10 every trace; no
 *   verdict when the control's floor is wider than the goal's margin).
 *
 * The receiver (in this process) takes the exports without decoding them. Nothing is asserted.
 */
import os from 'node:os';
import autocannon from 'autocannon';
import {
  processCpuMs,
  requireFreshBuild,
  SideBySide,
  Stack,
  startOtlpReceiver,
  waitFor,
  type Figures,
} from '@mgw/testing';
import { GOALS, SAMPLERS, sidesFromEnv, type TracingSide } from './support/tracing-sides.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const CONTACTS = Number(process.env.BENCH_CONTACTS ?? 50);
const REPEATS = Math.max(2, Number(process.env.BENCH_REPEATS ?? 4));
const DURATION_S = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const BUILT = process.env.BENCH_SOURCES !== '1';
if (BUILT) requireFreshBuild();

/** CPU time (user + system, s) a process has used so far; Linux only (NaN elsewhere). */
const cpuSeconds = (pid: number | undefined): number => processCpuMs(pid) / 1000;

// Spans are counted, not decoded: the decoding is the tests' (test/e2e/traces.test.ts).
const otlp = await startOtlpReceiver({ decode: false });
// The stack's environment keeps rate limits and account-safety caps out of the way (stack-env.ts).
const base = { LOG_LEVEL: 'warn', SEND_MIN_GAP_MS: '0' };
type SideName = TracingSide;
// The control is always measured: the floor every ratio is read against.
const names: SideName[] = [
  'off',
  'control',
  ...sidesFromEnv('ratio,on').filter((n) => n !== 'off' && n !== 'control'),
];
interface Side {
  name: SideName;
  stack: Stack;
  contacts: string[];
  sent: number;
  /** Accept runs so far. */
  runs: number;
}
const sides: Side[] = [];
try {
  for (const [i, name] of names.entries()) {
    const sampler = SAMPLERS[name];
    // BENCH_PROFILE=dir: every process of each side writes a CPU profile there when it stops.
    const profile: Record<string, string> = process.env.BENCH_PROFILE
      ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${process.env.BENCH_PROFILE}/${name}` }
      : {};
    const env = {
      ...(sampler ? { ...base, OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, ...sampler } : base),
      ...profile,
    };
    // The simulators run as processes of their own: this one runs autocannon and the receiver.
    const stack = await Stack.start({ env, built: BUILT, simulatorProcess: true });
    await stack.linkByQr(`155578${i}0001`, `Bench ${name}`);
    await stack.waitForStatus('connected');
    const contacts = Array.from({ length: CONTACTS }, (_, k) => `155578${i}${String(1000 + k)}`);
    sides.push({
      name,
      stack,
      contacts,
      sent: 0,
      runs: 0,
    });
  }

  /** Every contact holds the lists sent to it. */
  const delivered = async (side: Side) => {
    const counts = await Promise.all(side.contacts.map(async (c) => (await side.stack.inbox(c)).length));
    return counts.every((n) => n >= side.sent);
  };
  /** ROUNDS lists to the side's contacts, until delivered: the sender's CPU ms per message. */
  const sendRun = async (side: Side) => {
    const pid = side.stack.processes.find((p) => p.name.startsWith('sender'))!.child.pid;
    const cpu0 = cpuSeconds(pid);
    for (let r = 0; r < ROUNDS; r++) {
      const res = await side.stack.api('POST', '/send', { to: side.contacts, text: `round ${r}` });
      if (res.status !== 202) throw new Error(`send: ${res.status} ${JSON.stringify(res.body)}`);
    }
    side.sent += ROUNDS;
    await waitFor(() => delivered(side), {
      timeoutMs: 300_000,
      intervalMs: 100,
      what: `${side.name}: rounds delivered`,
    });
    return { senderCpu: ((cpuSeconds(pid) - cpu0) / (ROUNDS * CONTACTS)) * 1000 };
  };
  const acceptRun = async (side: Side) => {
    // A contact of its own per run: the simulator keeps the last 10,000 messages of an inbox.
    const to = `155578${sides.indexOf(side)}${String(9000 + side.runs)}`;
    const apiPid = side.stack.processes.find((p) => p.name.startsWith('api'))!.child.pid;
    const cpu0 = cpuSeconds(apiPid);
    const result = await autocannon({
      url: `${side.stack.apiUrl}/api/messenger/v1/send`,
      connections: CONNECTIONS,
      duration: DURATION_S,
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${side.stack.token}` },
      body: JSON.stringify({ to, text: 'accept bench' }),
    });
    if (result.non2xx) throw new Error(`${side.name}: ${result.non2xx} answers not 2xx`);
    side.runs++;
    const figures = {
      rps: result.requests.average,
      apiCpu: ((cpuSeconds(apiPid) - cpu0) / Math.max(1, result['2xx'])) * 1e6,
    };
    // What it queued goes out before the next run measures anything.
    await waitFor(async () => (await side.stack.inbox(to)).length >= result['2xx'], {
      timeoutMs: 300_000,
      intervalMs: 200,
      what: `${side.name}: the accepted singles delivered`,
    });
    return figures;
  };

  // Warm every side (sessions with every contact, V8's compilation), unmeasured.
  for (const side of sides) await sendRun(side);
  // The order rotated by one each repeat (libs/testing side-by-side.ts): each side in each place
  // equally often, never one measured twice in a row (a stack measured right after itself runs
  // warmer); in a repeat the accept runs of every side, then their send runs, in that order.
  const rounds = new SideBySide<SideName>({
    baseline: 'off',
    control: 'control',
    others: names.filter((n) => n !== 'off' && n !== 'control'),
    rounds: REPEATS,
  });
  const byName = new Map(sides.map((s) => [s.name, s]));
  for (const [round, order] of rounds.schedule.entries()) {
    const accepted = new Map<SideName, Figures>();
    for (const name of order) accepted.set(name, await acceptRun(byName.get(name)!));
    for (const name of order)
      rounds.record(name, round, { ...accepted.get(name)!, ...(await sendRun(byName.get(name)!)) });
  }
  console.log(
    `${process.version}; load average ${os.loadavg()[0]!.toFixed(1)} on ${os.cpus().length} cores; ` +
      `${rounds.describe()}; ${otlp.bodies.length} exports received (${(otlp.bodies.reduce((n, b) => n + b.length, 0) / 1048576).toFixed(1)} MiB)`,
  );
  const goals = Object.fromEntries(Object.entries(GOALS).map(([side, max]) => [side, { max }]));
  for (const line of rounds.report({
    metric: 'senderCpu',
    label: `sender CPU ms/message (${ROUNDS} lists of ${CONTACTS}, delivered)`,
    digits: 3,
    goals,
  }))
    console.log(`  ${line}`);
  for (const line of rounds.report({ metric: 'apiCpu', label: 'API CPU µs/accepted request' }))
    console.log(`  ${line}`);
  for (const line of rounds.report({ metric: 'rps', label: 'accept req/s' })) console.log(`  ${line}`);
} finally {
  for (const side of sides) await side.stack.stop().catch(() => undefined);
  await otlp.close();
}
