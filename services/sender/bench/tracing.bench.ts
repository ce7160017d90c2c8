/**
 * What OpenTelemetry traces cost (issue 56), side by side in one run: two stacks as `npm start`
 * runs them (built), the same but for the variables — `off` (no OTLP endpoint: no SDK loaded) and
 * `on` (every trace sampled, `parentbased_always_on`, exported over OTLP/HTTP protobuf to a real
 * receiver in this process that decodes every span) — each with its own simulator and a linked
 * device, pacing off. Alternating rounds (off, on, on, off, …):
 *
 * - accept: POST /send to one recipient, autocannon with BENCH_CONNECTIONS (10) for
 *   BENCH_SECONDS (5): `on` ÷ `off` requests a second (goal ≥ 0.95);
 * - send: BENCH_ROUNDS lists of BENCH_CONTACTS contacts until every contact has each: the sender's
 *   CPU (/proc) per message, `on` ÷ `off` (goal ≤ 1.05).
 *
 * The receiver (in this process) takes the exports without decoding them. Nothing is asserted.
 */
import { readFileSync } from 'node:fs';
import os from 'node:os';
import autocannon from 'autocannon';
import { Stack, requireFreshBuild, startOtlpReceiver, waitFor } from '@mgw/testing';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const CONTACTS = Number(process.env.BENCH_CONTACTS ?? 50);
const REPEATS = Math.max(2, Number(process.env.BENCH_REPEATS ?? 4));
const DURATION_S = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const BUILT = process.env.BENCH_SOURCES !== '1';
if (BUILT) requireFreshBuild();

function cpuSeconds(pid: number | undefined): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

// Spans are counted, not decoded: the decoding is the tests' (test/e2e/traces.test.ts).
const otlp = await startOtlpReceiver({ decode: false });
// The stack's environment keeps rate limits and account-safety caps out of the way (stack-env.ts).
const base = { LOG_LEVEL: 'warn', SEND_MIN_GAP_MS: '0' };
interface Side {
  name: 'off' | 'on';
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
  for (const [i, name] of (['off', 'on'] as const).entries()) {
    const env =
      name === 'on'
        ? { ...base, OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_TRACES_SAMPLER: 'parentbased_always_on' }
        : base;
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
  for (let i = 0; i < REPEATS; i++) {
    const order = i % 2 === 0 ? sides : [...sides].reverse();
    for (const side of order) await acceptRun(side);
    for (const side of order) await sendRun(side, true);
  }
  const [off, on] = sides as [Side, Side];
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const cpuPerMsg = (s: Side) => (s.senderCpu / s.messages) * 1000;
  console.log(
    `${process.version}; load average ${os.loadavg()[0]!.toFixed(1)} on ${os.cpus().length} cores; ` +
      `${REPEATS} alternating repeats; ${otlp.bodies.length} exports received (${(otlp.bodies.reduce((n, b) => n + b.length, 0) / 1048576).toFixed(1)} MiB)`,
  );
  console.log(
    `  accept (POST /send, ${CONNECTIONS} connections, ${DURATION_S} s): off ${mean(off.rps).toFixed(0)} req/s, ` +
      `on ${mean(on.rps).toFixed(0)} req/s: on/off ${(mean(on.rps) / mean(off.rps)).toFixed(3)} (goal ≥ 0.95)`,
  );
  const apiCpuPerReq = (s: Side) => (s.apiCpu / s.accepted) * 1e6;
  console.log(
    `  API CPU per accepted request: off ${apiCpuPerReq(off).toFixed(0)} µs, on ${apiCpuPerReq(on).toFixed(0)} µs: ` +
      `on/off ${(apiCpuPerReq(on) / apiCpuPerReq(off)).toFixed(3)} (the accept rate's cost where the API has a core of its own: ` +
      `1 ÷ this is the rate's ratio)`,
  );
  console.log(
    `  sender CPU per message (${ROUNDS} lists of ${CONTACTS}, delivered): off ${cpuPerMsg(off).toFixed(3)} ms, ` +
      `on ${cpuPerMsg(on).toFixed(3)} ms: on/off ${(cpuPerMsg(on) / cpuPerMsg(off)).toFixed(3)} (goal ≤ 1.05)`,
  );
} finally {
  for (const side of sides) await side.stack.stop().catch(() => undefined);
  await otlp.close();
}
