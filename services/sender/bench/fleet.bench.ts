/**
 * One sender process holding a fleet, in sandbox mode with the production pacing and lease
 * timings, run as `npm start` runs it: the built services (run `npm run build` first; a missing
 * or stale build stops the bench) and the simulator as processes of their own, so neither the
 * simulator nor this process's polling takes the sender's or each other's CPU:
 *
 * 0. The pace beside the previous release, in the same minutes (issue 81, item 5): two more
 *    stacks of the previous release's services (UPGRADE_BASE_COMMIT, built from the history as
 *    accept-previous.bench.ts builds it; this checkout's simulator), the second one the control,
 *    each with as many devices, take turns with this one in BENCH_FLEET_ROUNDS (3) rotated rounds
 *    (libs/testing side-by-side.ts), each turn a list of new contacts per device: each device's
 *    pace (as below), this ÷ previous and the control's ratio as the noise floor; a verdict on
 *    "no more than 3 % behind the previous release" only when the floor is narrower.
 *    BENCH_FLEET_PREVIOUS=0 skips it.
 * 1. BENCH_FLEET_DEVICES (100) devices each send a BENCH_FLEET_LIST (20)-recipient list to new
 *    contacts at the default pacing (SEND_MIN_GAP_MS=1000, jitter 500): delivered against the
 *    paced ideal (all devices at once; the phase ends with the slowest device, so the ideal is
 *    the expected time of the slowest of the devices' (list − 1) gaps of 1,000 + U(0, 500) ms,
 *    by simulation; also printed against the mean device's 1,250 ms gaps), the sender's
 *    RSS, lease renewals that were not `renewed` (restored / lost / unknown) and "lease lost"
 *    lines, and the sender's event-loop lag p99 (the worst of the phase's scrape windows: prom-client
 *    resets its histogram at each scrape; and the max). Then the same lists again to other new
 *    contacts with typing off (each device's policy), and each device's pace in both rounds side
 *    by side: its list's (list − 1) gaps at the mean 1,250 ms over the time from its first send to
 *    its last (median and slowest device; and, by simulation, what the jitter alone gives).
 *    BENCH_FLEET_LISTS_ONLY=1 stops there.
 * 2. CPU-seconds of the sender per delivered message, against a bare Baileys socket (its own
 *    process, support/bare-socket.ts, on the built packages too) sending to as many new contacts
 *    in the same run: a ratio.
 * 3. A second sender joins the first holding the devices: time until each holds its share
 *    (directed hand-over) and every device is connected again.
 * 4. The second sender leaves; devices are linked up to BENCH_FLEET_IDLE_DEVICES (300), held idle
 *    by the one sender for BENCH_FLEET_IDLE_S (30) s: its RSS and lease outcomes.
 *
 * Nothing is asserted: the figures are printed, with the goals of issue 11 beside them.
 * BENCH_FLEET_PROFILE_DIR=<dir> has every process this one starts (services, simulator, bare
 * socket) write a V8 CPU profile there when it stops (`--cpu-prof`; file names carry the pids printed).
 */
import { spawn } from 'node:child_process';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { keys } from '@mgw/contracts';
import { buildPreviousVersion, SideBySide, type Stack, UPGRADE_BASE_COMMIT, waitFor } from '@mgw/testing';
import { median } from '../src/fleet/queue-metrics.js';
import { SETTINGS_TTL_MS } from '../src/send/pacing.js';
import {
  Fleet,
  GAP_MS,
  JITTER_MS,
  lostLines,
  metric,
  metrics,
  procStats,
  renewals,
  sent,
  startFleetStack,
  tokenStoreOf,
} from './support/fleet.js';

const DEVICES = Number(process.env.BENCH_FLEET_DEVICES ?? 100);
const LIST = Number(process.env.BENCH_FLEET_LIST ?? 20);
const IDLE_DEVICES = Number(process.env.BENCH_FLEET_IDLE_DEVICES ?? 300);
const IDLE_S = Number(process.env.BENCH_FLEET_IDLE_S ?? 30);
const PROFILE_DIR = process.env.BENCH_FLEET_PROFILE_DIR;
/** BENCH_FLEET_PREVIOUS=0 skips the pace beside the previous release (phase 0). */
const PREVIOUS = process.env.BENCH_FLEET_PREVIOUS !== '0';
/** Rotated rounds of phase 0 (rounded up to a multiple of its 3 sides). */
const ROUNDS = Number(process.env.BENCH_FLEET_ROUNDS ?? 3);
type PaceSide = 'previous' | 'control' | 'this';
const LISTS_ONLY = process.env.BENCH_FLEET_LISTS_ONLY === '1';
// Issue 30's goals: 100 busy devices in 512 MiB, 300 in 1 GiB; 300 idle in 1 GiB, 1,000 in 1.5 GiB.
const BUSY_GOAL_MIB = DEVICES <= 100 ? 512 : 1024;
const IDLE_GOAL_MIB = IDLE_DEVICES <= 300 ? 1024 : 1536;

/**
 * The paced ideal of the lists phase: a sender that adds nothing to the pacing finishes when the
 * slowest device does, each device waiting (list − 1) gaps of GAP + U(0, JITTER) ms. The expected
 * time of the slowest of `devices`, in seconds, by simulation (4,000 trials).
 */
function pacedIdealSeconds(devices: number, list: number): number {
  const trials = 4000;
  let sum = 0;
  for (let t = 0; t < trials; t++) {
    let slowest = 0;
    for (let d = 0; d < devices; d++) {
      let total = 0;
      for (let k = 1; k < list; k++) total += GAP_MS + Math.random() * JITTER_MS;
      slowest = Math.max(slowest, total);
    }
    sum += slowest;
  }
  return sum / trials / 1000;
}
/**
 * Each device's pace (its list's paced ideal at the mean gap over its time) for a sender adding
 * nothing: the jitter alone spreads it. The median and slowest of `devices`, averaged over 1,000
 * trials, by simulation.
 */
function paceSpread(devices: number, list: number): { median: number; slowest: number } {
  const trials = 1000;
  let medians = 0;
  let slowest = 0;
  for (let t = 0; t < trials; t++) {
    const paces = Array.from({ length: devices }, () => {
      let total = 0;
      for (let k = 1; k < list; k++) total += GAP_MS + Math.random() * JITTER_MS;
      return ((list - 1) * (GAP_MS + JITTER_MS / 2)) / total;
    }).sort((x, y) => x - y);
    medians += median(paces);
    slowest += paces[0]!;
  }
  return { median: medians / trials, slowest: slowest / trials };
}
if (PROFILE_DIR) process.env.NODE_OPTIONS = `--cpu-prof --cpu-prof-dir=${PROFILE_DIR}`;

const stack = await startFleetStack();
const fleet = new Fleet(stack);

function bareBaseline(messages: number): Promise<{ messages: number; cpuSeconds: number; seconds: number }> {
  const script = fileURLToPath(new URL('./support/bare-socket.ts', import.meta.url));
  // Node strips the script's types itself; without the development condition its imports are the
  // built packages, as the sender's are (no tsx, no source maps on either side of the ratio).
  // Node 20 cannot strip types: tsx does it there (still without the development condition).
  const strip = (process.features as { typescript?: unknown }).typescript ? [] : ['--import', 'tsx'];
  const child = spawn(process.execPath, [...strip, script], {
    env: {
      ...process.env,
      BARE_SIM_INFO: JSON.stringify(stack.simulator.info),
      BARE_SIM_CONTROL_URL: stack.simulator.controlUrl,
      BARE_MESSAGES: String(messages),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  return new Promise((resolve, reject) =>
    child.once('exit', (code) =>
      code === 0
        ? resolve(JSON.parse(out.trim().split('\n').pop()!))
        : reject(new Error(`bare socket exited ${code}`)),
    ),
  );
}

const lines: string[] = [];
const report = (line: string) => {
  lines.push(line);
  console.log(line);
};

/**
 * The pace side by side (issue 81, item 5): this stack, a stack of the previous release's
 * services (UPGRADE_BASE_COMMIT, built from the history; this checkout's simulator) and its control
 * (a second stack of the previous release), each with DEVICES devices linked, take turns in
 * rotated rounds (libs/testing side-by-side.ts); in each turn every device of the side sends one
 * LIST-recipient list to contacts new to it at the default pacing, typing on. Per turn: each
 * device's pace (as in phase 1), their median and slowest, and delivered/ideal. The other stacks
 * stay up, idle, while one sends: each side runs beside the same idle neighbours.
 */
async function paceBesidePrevious(thisPid: number): Promise<void> {
  const previous = await buildPreviousVersion(UPGRADE_BASE_COMMIT, (line) => console.log(`  ${line}`));
  const started: Stack[] = [];
  try {
    const sides = { this: { stack, fleet, pid: thisPid } } as Record<
      PaceSide,
      { stack: Stack; fleet: Fleet; pid: number }
    >;
    for (const name of ['previous', 'control'] as const) {
      const other = await startFleetStack(previous.root);
      started.push(other);
      // The previous release's own store writes its tokens: its API reads its own format.
      const otherFleet = new Fleet(other, await tokenStoreOf(previous.root, other.redis));
      await otherFleet.linkUpTo(DEVICES);
      const otherPid = other.senders()[0]!.child.pid!;
      await waitFor(() => otherFleet.allHeldBy(otherPid), {
        timeoutMs: 120_000,
        what: `the ${name} sender holds every device`,
      });
      sides[name] = { stack: other, fleet: otherFleet, pid: otherPid };
    }
    const idealSeconds = pacedIdealSeconds(DEVICES, LIST);
    const rounds = new SideBySide<PaceSide>({
      baseline: 'previous',
      control: 'control',
      others: ['this'],
      rounds: ROUNDS,
    });
    await rounds.run(async (name, round) => {
      const { stack: s, fleet: f } = sides[name];
      const sender = s.senders()[0]!;
      const total = DEVICES * LIST;
      const sentBefore = sent(await metrics(sender));
      const t0 = performance.now();
      // New contacts in every round: prefixes 1560… (phase 1 uses 1555 and 1556).
      const lists = await f.sendLists(DEVICES, LIST, 'pace', String(1560 + round));
      await waitFor(async () => sent(await metrics(sender)) - sentBefore >= total, {
        timeoutMs: 900_000,
        intervalMs: 1000,
        what: `${name}: ${total} messages sent`,
      });
      const seconds = (performance.now() - t0) / 1000;
      const paces = (await f.paces(lists, GAP_MS + JITTER_MS / 2)).sort((x, y) => x - y);
      console.log(
        `  round ${round + 1}, ${name}: pace median ${median(paces).toFixed(3)}, slowest ${paces[0]!.toFixed(3)}; ${seconds.toFixed(1)} s`,
      );
      return { median: median(paces), slowest: paces[0]!, delivered: idealSeconds / seconds };
    });
    report(
      `\n${DEVICES} devices × ${LIST}-recipient list (new contacts each turn), default pacing, beside the previous ` +
        `release ${previous.name} (${previous.commit.slice(0, 10)}; this checkout's simulator); ${rounds.describe()}:`,
    );
    // The pace goal (median ≥ 0.97 of the ideal) allows 3 %: this build may fall that far behind
    // the previous release's pace, no further.
    for (const line of rounds.report({
      metric: 'median',
      label: "each device's pace, median device",
      digits: 3,
      goals: { this: { min: 0.97 } },
    }))
      report(`  ${line}`);
    for (const line of rounds.report({
      metric: 'slowest',
      label: "each device's pace, slowest device",
      digits: 3,
    }))
      report(`  ${line}`);
    for (const line of rounds.report({ metric: 'delivered', label: 'delivered/ideal', digits: 3 }))
      report(`  ${line}`);
  } finally {
    for (const other of started) await other.stop().catch(() => undefined);
  }
}

try {
  const [first] = stack.senders();
  const pid = first!.child.pid!;
  console.log(
    `${process.version}; one sender (pid ${pid}), simulator (pid ${stack.simulator.pid}); pacing ${GAP_MS} ms + jitter ${JITTER_MS} ms`,
  );
  const memory = (text: string) =>
    `heap used ${(metric(text, 'nodejs_heap_size_used_bytes') / 2 ** 20).toFixed(0)} of ` +
    `${(metric(text, 'nodejs_heap_size_total_bytes') / 2 ** 20).toFixed(0)} MiB, external ` +
    `${(metric(text, 'nodejs_external_memory_bytes') / 2 ** 20).toFixed(0)} MiB`;
  report(
    `sender with no device: RSS ${procStats(pid).rssMiB.toFixed(0)} MiB (${memory(await metrics(first!))}; built JS)`,
  );
  await fleet.linkUpTo(DEVICES);
  await waitFor(() => fleet.allHeldBy(pid), {
    timeoutMs: 120_000,
    what: 'the sender holds every device',
  });

  // --- 0. the pace beside the previous release, in the same minutes -------------------------------
  if (PREVIOUS) await paceBesidePrevious(pid);

  // --- 1. lists at the default pacing, typing on (the default), then off --------------------------
  const simPid = stack.simulator.pid!;
  const others = stack.processes.filter((p) => p !== first && p.child.exitCode === null);
  const total = DEVICES * LIST;
  /** One round of lists to new contacts (numbers starting `prefix`): until all are sent. */
  async function listsPhase(prefix: string) {
    const before = await metrics(first!); // also resets prom-client's event-loop histogram
    const sentBefore = sent(before);
    const lostBefore = lostLines(first!);
    const cpu0 = procStats(pid).cpuSeconds;
    // Where the machine's CPU went during the phase: every process of the stack, the simulator (it
    // decrypts every message and sets up every new Signal session) and this one (it only polls).
    const others0 = others.map((p) => procStats(p.child.pid!).cpuSeconds);
    const sim0 = procStats(simPid).cpuSeconds;
    const self0 = process.cpuUsage();
    const t0 = performance.now();
    const lists = await fleet.sendLists(DEVICES, LIST, 'fleet', prefix);
    let sentNow = 0;
    let after = '';
    // A scrape of 100 devices' series costs the sender CPU that counts in its per-message figure
    // (every 250 ms it was ~2.5 % of the phase; Prometheus scrapes every 15 s): every 2 s until 90 %
    // are sent, then every 250 ms for the end's timing.
    let nextScrape = 0;
    // Each scrape resets prom-client's event-loop histogram: the phase's lag is the worst window's.
    let lagP99 = 0;
    let lagMax = 0;
    await waitFor(
      async () => {
        if (performance.now() < nextScrape) return false;
        after = await metrics(first!);
        lagP99 = Math.max(lagP99, metric(after, 'nodejs_eventloop_lag_p99_seconds') * 1000);
        lagMax = Math.max(lagMax, metric(after, 'nodejs_eventloop_lag_max_seconds') * 1000);
        sentNow = sent(after) - sentBefore;
        nextScrape = performance.now() + (sentNow < 0.9 * total ? 2000 : 0);
        return sentNow >= total;
      },
      { timeoutMs: 900_000, intervalMs: 250, what: `${total} messages sent` },
    );
    const seconds = (performance.now() - t0) / 1000;
    const cpuSender = procStats(pid).cpuSeconds - cpu0;
    const selfCpu = process.cpuUsage(self0);
    const share = (cpu: number) => `${((cpu / seconds) * 100).toFixed(0)} %`;
    const cpuLine = [
      `sender ${share(cpuSender)}`,
      ...others.map(
        (p, i) => `${p.name.split('#')[0]} ${share(procStats(p.child.pid!).cpuSeconds - others0[i]!)}`,
      ),
      `simulator ${share(procStats(simPid).cpuSeconds - sim0)}`,
      `bench ${share((selfCpu.user + selfCpu.system) / 1e6)}`,
    ].join(', ');
    const paces = (await fleet.paces(lists, GAP_MS + JITTER_MS / 2)).sort((x, y) => x - y);
    return { before, after, sentNow, seconds, cpuSender, cpuLine, lagP99, lagMax, lostBefore, paces };
  }
  const typingOn = await listsPhase('1555');
  const { before, after, sentNow, seconds, cpuSender, cpuLine, lagP99, lagMax, lostBefore } = typingOn;
  const idealSeconds = pacedIdealSeconds(DEVICES, LIST);
  const meanDeviceSeconds = ((LIST - 1) * (GAP_MS + JITTER_MS / 2)) / 1000;
  const notRenewed = ['restored', 'lost', 'unknown'].map((o) => renewals(after, o) - renewals(before, o));
  const rss = procStats(pid).rssMiB;
  report(`\n${DEVICES} devices × ${LIST}-recipient list (new contacts), default pacing:`);
  report(
    `  delivered ${sentNow} in ${seconds.toFixed(1)} s; paced ideal ${idealSeconds.toFixed(1)} s (the slowest of ` +
      `${DEVICES} devices; the mean device ${meanDeviceSeconds.toFixed(1)} s) → delivered/ideal ` +
      `${(idealSeconds / seconds).toFixed(2)} (goal ≥ 0.95; ${(meanDeviceSeconds / seconds).toFixed(2)} against the mean device)`,
  );
  report(
    `  sender RSS ${rss.toFixed(0)} MiB (goal ≤ ${BUSY_GOAL_MIB}; ${memory(after)}); event-loop lag p99 ${lagP99.toFixed(0)} ms (goal < 250; the worst scrape window's, max ${lagMax.toFixed(0)} ms)`,
  );
  report(
    `  CPU during the phase, % of one core: ${cpuLine}; load average ${os.loadavg()[0]!.toFixed(1)} on ${os.cpus().length} cores`,
  );
  report(
    `  lease renewals not 'renewed': restored ${notRenewed[0]}, lost ${notRenewed[1]}, unknown ${notRenewed[2]}; ` +
      `"lease lost" lines ${lostLines(first!) - lostBefore} (goal: 0)`,
  );

  // The same again with typing off (each device's policy), to other new contacts, side by side.
  const settings = stack.redis.pipeline();
  for (const d of fleet.linked) settings.hset(keys.deviceSettings(d.deviceId), 'typing', 'false');
  await settings.exec();
  await new Promise((r) => setTimeout(r, SETTINGS_TTL_MS + 1000)); // the pacers read it again
  const typingOff = await listsPhase('1556');
  const restore = stack.redis.pipeline();
  for (const d of fleet.linked) restore.hdel(keys.deviceSettings(d.deviceId), 'typing');
  await restore.exec();
  const reference = paceSpread(DEVICES, LIST);
  const pace = (p: number[]) => `median ${median(p).toFixed(2)}, slowest ${p[0]!.toFixed(2)}`;
  report(
    `  each device's pace (its ${LIST - 1} gaps at the mean ${(GAP_MS + JITTER_MS / 2) / 1000} s over its first to last send):`,
  );
  report(
    `    typing on  ${pace(typingOn.paces)} (goal: median ≥ 0.97, slowest ≥ 0.93); the lists took ${typingOn.seconds.toFixed(1)} s`,
  );
  report(
    `    typing off ${pace(typingOff.paces)}; the lists took ${typingOff.seconds.toFixed(1)} s (${typingOff.cpuLine})`,
  );
  report(
    `    a sender adding nothing (the jitter alone, by simulation): median ${reference.median.toFixed(2)}, slowest ${reference.slowest.toFixed(2)}`,
  );
  if (LISTS_ONLY) {
    console.log(`\n--- summary\n${lines.join('\n')}`);
    await stack.stop();
    process.exit(0);
  }

  // --- 2. CPU per delivered message against a bare socket ------------------------------------------
  const bare = await bareBaseline(total);
  const perSender = cpuSender / sentNow;
  const perBare = bare.cpuSeconds / bare.messages;
  report(
    `  CPU per delivered message: sender ${(perSender * 1000).toFixed(2)} ms, bare Baileys socket ` +
      `${(perBare * 1000).toFixed(2)} ms (${bare.messages} new contacts in ${bare.seconds.toFixed(0)} s) → ratio ${(perSender / perBare).toFixed(2)} (goal ≤ 1.3)`,
  );

  // --- 3. a second sender joins -------------------------------------------------------------------
  const joinAt = performance.now();
  const second = await stack.startService('sender');
  const started = (performance.now() - joinAt) / 1000;
  const half = Math.ceil(DEVICES / 2);
  await waitFor(
    async () => {
      const h = await fleet.holders();
      return (
        h.get(String(second.child.pid)) === DEVICES - half &&
        h.get(String(pid)) === half &&
        (await fleet.allConnected())
      );
    },
    { timeoutMs: 600_000, intervalMs: 250, what: 'each sender holds its share' },
  );
  report(
    `\nSecond sender joins a first holding ${DEVICES}: each holds its share, all connected, ` +
      `${((performance.now() - joinAt) / 1000).toFixed(1)} s after its start (${started.toFixed(1)} s of it to start the process)`,
  );

  // --- 4. idle fleet ------------------------------------------------------------------------------
  second.child.kill('SIGTERM');
  await second.exited;
  await fleet.linkUpTo(IDLE_DEVICES);
  await waitFor(() => fleet.allHeldBy(pid), {
    timeoutMs: 300_000,
    intervalMs: 1000,
    what: 'the one sender holds every device',
  });
  const idleBefore = await metrics(first!);
  const lostIdle = lostLines(first!);
  await new Promise((r) => setTimeout(r, IDLE_S * 1000));
  const idleAfter = await metrics(first!);
  const idleNot = ['restored', 'lost', 'unknown'].map(
    (o) => renewals(idleAfter, o) - renewals(idleBefore, o),
  );
  report(
    `\n${IDLE_DEVICES} devices linked and idle ${IDLE_S} s on one sender: RSS ${procStats(pid).rssMiB.toFixed(0)} MiB ` +
      `(goal < ${IDLE_GOAL_MIB}; ${memory(idleAfter)}); event-loop lag p99 ${(metric(idleAfter, 'nodejs_eventloop_lag_p99_seconds') * 1000).toFixed(0)} ms; ` +
      `renewals not 'renewed': restored ${idleNot[0]}, lost ${idleNot[1]}, unknown ${idleNot[2]}; "lease lost" lines ${lostLines(first!) - lostIdle}`,
  );
  console.log(`\n--- summary\n${lines.join('\n')}`);
} finally {
  await stack.stop();
}
process.exit(0);
