/**
 * What OpenTelemetry traces cost the sender and the API (issues 56 and 71), side by side in one
 * run: one stack per side as `npm start` runs them (built), the same but for the variables — `off`
 * (no OTLP endpoint: no SDK loaded), `ratio` (the 10 % the Kubernetes files ship,
 * `parentbased_traceidratio` 0.1), `on` (every trace sampled); BENCH_SIDES may name `unsampled`
 * (ratio 0) and `control` (a second stack with tracing off: what two equal stacks differ by, the
 * measure's own noise). The traced ones export over OTLP/HTTP protobuf to a receiver in this
 * process; each stack has its own simulator and a linked device, pacing off. BENCH_REPEATS (4,
 * rounded up to a multiple of the sides) repeats, the order rotated by one each time:
 *
 * - accept: POST /send to one recipient, autocannon with BENCH_CONNECTIONS (10) for
 *   BENCH_SECONDS (5): the API's CPU per accepted request ÷ off's;
 * - send: BENCH_ROUNDS lists of BENCH_CONTACTS contacts until every contact has each: the sender's
 *   CPU (/proc) per message ÷ off's (issue 71's goals: ≤ 1.03 at 10 %, ≤ 1.10 every trace).
 *
 * The receiver (in this process) takes the exports without decoding them. Nothing is asserted.
 */
import os from 'node:os';
import autocannon from 'autocannon';
import { processCpuMs, Stack, requireFreshBuild, startOtlpReceiver, waitFor } from '@mgw/testing';
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
const names = sidesFromEnv('ratio,on');
interface Side {
  name: SideName;
  stack: Stack;
  contacts: string[];
  sent: number;
  rps: number[];
  apiCpu: number;
  accepted: number;
  senderCpu: number;
  messages: number;
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
      rps: [],
      apiCpu: 0,
      accepted: 0,
      senderCpu: 0,
      messages: 0,
    });
  }

  /** Every contact holds the lists sent to it. */
  const delivered = async (side: Side) => {
    const counts = await Promise.all(side.contacts.map(async (c) => (await side.stack.inbox(c)).length));
    return counts.every((n) => n >= side.sent);
  };
  const sendRun = async (side: Side, measured: boolean) => {
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
    if (!measured) return;
    side.senderCpu += cpuSeconds(pid) - cpu0;
    side.messages += ROUNDS * CONTACTS;
  };
  const acceptRun = async (side: Side) => {
    // A contact of its own per run: the simulator keeps the last 10,000 messages of an inbox.
    const to = `155578${sides.indexOf(side)}${String(9000 + side.rps.length)}`;
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
    side.rps.push(result.requests.average);
    side.apiCpu += cpuSeconds(apiPid) - cpu0;
    side.accepted += result['2xx'];
    // What it queued goes out before the next run measures anything.
    await waitFor(async () => (await side.stack.inbox(to)).length >= result['2xx'], {
      timeoutMs: 300_000,
      intervalMs: 200,
      what: `${side.name}: the accepted singles delivered`,
    });
  };

  // Warm both (sessions with every contact, V8's compilation), unmeasured.
  for (const side of sides) await sendRun(side, false);
  // The order rotated by one each repeat: each side in each place equally often, never one
  // measured twice in a row (a stack measured right after itself runs warmer).
  const repeats = Math.ceil(REPEATS / sides.length) * sides.length;
  for (let i = 0; i < repeats; i++) {
    const order = sides.map((_, k) => sides[(i + k) % sides.length]!);
    for (const side of order) await acceptRun(side);
    for (const side of order) await sendRun(side, true);
  }
  const off = sides[0]!;
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const cpuPerMsg = (s: Side) => (s.senderCpu / s.messages) * 1000;
  const apiCpuPerReq = (s: Side) => (s.apiCpu / s.accepted) * 1e6;
  console.log(
    `${process.version}; load average ${os.loadavg()[0]!.toFixed(1)} on ${os.cpus().length} cores; ` +
      `${repeats} repeats, the order rotated; ${otlp.bodies.length} exports received (${(otlp.bodies.reduce((n, b) => n + b.length, 0) / 1048576).toFixed(1)} MiB)`,
  );
  console.log(
    `  off: accept ${mean(off.rps).toFixed(0)} req/s, API CPU ${apiCpuPerReq(off).toFixed(0)} µs per accepted request; ` +
      `sender CPU ${cpuPerMsg(off).toFixed(3)} ms per message (${ROUNDS} lists of ${CONTACTS}, delivered)`,
  );
  for (const side of sides.slice(1))
    console.log(
      `  ${side.name.padEnd(9)} ÷ off: sender CPU per message ${(cpuPerMsg(side) / cpuPerMsg(off)).toFixed(3)}` +
        `${GOALS[side.name] ? ` (goal ≤ ${GOALS[side.name]})` : ''}; API CPU per accepted request ` +
        `${(apiCpuPerReq(side) / apiCpuPerReq(off)).toFixed(3)}; accept req/s ${(mean(side.rps) / mean(off.rps)).toFixed(3)}`,
    );
} finally {
  for (const side of sides) await side.stack.stop().catch(() => undefined);
  await otlp.close();
}
