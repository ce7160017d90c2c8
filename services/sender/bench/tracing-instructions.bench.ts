/**
 * What tracing costs the sender per message as instructions (issue 71), counted by valgrind's
 * callgrind: `tracing.bench.ts` measures CPU time, which on a shared machine moves between two
 * equal stacks by as much as the goals (≤ 1.03 at the shipped 10 % ratio, ≤ 1.10 every trace
 * sampled); an instruction count does not move with the load.
 *
 * One stack per side, all up at once (built, its sender under callgrind holding one linked device;
 * the API and the notifier traced alike): `off` (no OTLP endpoint), `control` (a second stack with
 * tracing off, always there: the noise floor), `ratio`
 * (`parentbased_traceidratio` 0.1: the API decides, the sender follows the job's decision) and
 * `on` (every trace sampled), exporting over OTLP/HTTP protobuf to a receiver in this process;
 * BENCH_SIDES picks them, and may add `unsampled` (ratio 0). A list is one trace, sampled or not
 * whole: at 10 %, which of the few measured lists were sampled decides much of `ratio`'s figure. Each side sends lists of BENCH_CG_CONTACTS (20) through POST /send,
 * pacing off: a round that sets up the sessions and BENCH_CG_WARM (3) rounds, then
 * BENCH_CG_ROUNDS (5, rounded up to a multiple of the sides) measured rounds in turns whose order
 * rotates each round (libs/testing side-by-side.ts), each turn counted alone (counters dumped right
 * before and after), until every contact has it and 3 s more (its receipts are counted too); each
 * side ÷ off of the same round, the median, against the goal — no verdict when the control's
 * floor is wider than its margin. Minutes per side. Needs `valgrind`; nothing is asserted.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  callgrindDump,
  callgrindWrapper,
  SideBySide,
  type Stack,
  startOtlpReceiver,
  valgrindAvailable,
} from '@mgw/testing';
import {
  GOALS,
  linkDevice,
  sendRound,
  sideStack,
  sidesFromEnv,
  type TracingSide,
  UNDER_VALGRIND_ENV,
} from './support/tracing-sides.js';

const CONTACTS = Number(process.env.BENCH_CG_CONTACTS ?? 20);
const WARM = Number(process.env.BENCH_CG_WARM ?? 3);
const ROUNDS = Number(process.env.BENCH_CG_ROUNDS ?? 5);
const SETTLE_MS = 3000;
const UNDER_VALGRIND_MS = 600_000;

if (!valgrindAvailable()) {
  console.log('sender instructions per message with tracing: skipped (valgrind is not installed)');
  process.exit(0);
}

type Side = TracingSide;
// The control, a second stack with tracing off, is always counted: the floor every ratio is read against.
const sides: Side[] = [
  'off',
  'control',
  ...sidesFromEnv('ratio,on').filter((n) => n !== 'off' && n !== 'control'),
];

const dir = mkdtempSync(path.join(tmpdir(), 'mgw-callgrind-'));
const otlp = await startOtlpReceiver({ decode: false });
const stacks: Stack[] = [];
try {
  const counted = {} as Record<Side, { pid: number; round: (n: number) => Promise<void>; next: number }>;
  for (const [i, side] of sides.entries()) {
    const stack = await sideStack(side, otlp.url, UNDER_VALGRIND_ENV);
    stacks.push(stack);
    const sender = await stack.startService(
      'sender',
      {},
      { wrapper: callgrindWrapper(dir, `sender-${side}`), readyTimeoutMs: UNDER_VALGRIND_MS },
    );
    // linkByQr's own 30 s wait for `connected` is too short for a sender under valgrind.
    await linkDevice(stack, `1555775${i}001`, `Bench ${side}`, UNDER_VALGRIND_MS);
    const to = Array.from({ length: CONTACTS }, (_, k) => `1555776${i}${String(k).padStart(3, '0')}`);
    const round = (n: number) =>
      sendRound(stack, to, n, { timeoutMs: UNDER_VALGRIND_MS, settleMs: SETTLE_MS, what: side });
    counted[side] = { pid: sender.child.pid!, round, next: 1 };
  }
  // The round that sets up the sessions and the warm-up rounds, each side in turn, uncounted.
  for (let n = 1; n <= 1 + WARM; n++)
    for (const side of sides) await counted[side].round(counted[side].next++);
  const rounds = new SideBySide<Side>({
    baseline: 'off',
    control: 'control',
    others: sides.slice(2),
    rounds: ROUNDS,
  });
  // Each turn counted alone: a dump right before it (the counters since then dropped), one after.
  await rounds.run(async (side) => {
    const c = counted[side];
    await callgrindDump(dir, `sender-${side}`, c.pid);
    await c.round(c.next++);
    const got = await callgrindDump(dir, `sender-${side}`, c.pid);
    return { total: got.total / CONTACTS, mainThread: got.mainThread / CONTACTS };
  });
  console.log(
    `sender instructions per message (callgrind; rounds of ${CONTACTS} contacts after ${WARM} warm-up rounds; ` +
      `pacing off; receipts included; ${process.version}; ${otlp.bodies.length} exports received); ${rounds.describe()}:`,
  );
  const goals = Object.fromEntries(Object.entries(GOALS).map(([side, max]) => [side, { max }]));
  for (const [metric, label] of [
    ['mainThread', 'main thread instructions/message'],
    ['total', 'all threads instructions/message'],
  ] as const)
    for (const line of rounds.report({ metric, label, goals })) console.log(`  ${line}`);
} finally {
  for (const stack of stacks) {
    // The sender under valgrind is slow to stop: it is killed, its counts are taken.
    for (const p of stack.processes) if (p.name.startsWith('sender')) p.child.kill('SIGKILL');
    await stack.stop();
  }
  await otlp.close();
  rmSync(dir, { recursive: true, force: true });
}
process.exit(0);
