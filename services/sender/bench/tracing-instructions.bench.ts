/**
 * What tracing costs the sender per message as instructions (issue 71), counted by valgrind's
 * callgrind: `tracing.bench.ts` measures CPU time, which on a shared machine moves between two
 * equal stacks by as much as the goals (≤ 1.03 at the shipped 10 % ratio, ≤ 1.10 every trace
 * sampled); an instruction count does not move with the load.
 *
 * One stack per side in turn (built, its sender under callgrind holding one linked device; the
 * API and the notifier traced alike): `off` (no OTLP endpoint), `ratio`
 * (`parentbased_traceidratio` 0.1: the API decides, the sender follows the job's decision) and
 * `on` (every trace sampled), exporting over OTLP/HTTP protobuf to a receiver in this process;
 * BENCH_SIDES picks them, and may add `unsampled` (ratio 0). A list is one trace, sampled or not
 * whole: at 10 %, which of the few measured lists were sampled decides much of `ratio`'s figure. Each side sends lists of BENCH_CG_CONTACTS (20) through POST /send,
 * pacing off: a round that sets up the sessions and BENCH_CG_WARM (3) rounds, then the counters
 * are reset, then BENCH_CG_ROUNDS (5) measured rounds, each until every contact has it and 3 s
 * more (its receipts are counted too). Minutes per side. Needs `valgrind`; nothing is asserted.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  callgrindDump,
  callgrindWrapper,
  startOtlpReceiver,
  valgrindAvailable,
  type Instructions,
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
const sides = sidesFromEnv('ratio,on');

const dir = mkdtempSync(path.join(tmpdir(), 'mgw-callgrind-'));
const otlp = await startOtlpReceiver({ decode: false });
const counted = {} as Record<Side, Instructions>;
try {
  for (const [i, side] of sides.entries()) {
    const stack = await sideStack(side, otlp.url, UNDER_VALGRIND_ENV);
    try {
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
      for (let n = 1; n <= 1 + WARM; n++) await round(n);
      await callgrindDump(dir, `sender-${side}`, sender.child.pid!);
      for (let n = 2 + WARM; n <= 1 + WARM + ROUNDS; n++) await round(n);
      const got = await callgrindDump(dir, `sender-${side}`, sender.child.pid!);
      const messages = ROUNDS * CONTACTS;
      counted[side] = { total: got.total / messages, mainThread: got.mainThread / messages };
    } finally {
      // The sender under valgrind is slow to stop: it is killed, its counts are taken.
      for (const p of stack.processes) if (p.name.startsWith('sender')) p.child.kill('SIGKILL');
      await stack.stop();
    }
  }
  const m = (n: number) => `${(n / 1e6).toFixed(3)} M`;
  console.log(
    `sender instructions per message (callgrind; ${ROUNDS} rounds × ${CONTACTS} contacts after ${WARM} ` +
      `warm-up rounds; pacing off; receipts included; ${process.version}; ${otlp.bodies.length} exports received):`,
  );
  for (const side of sides) {
    const c = counted[side];
    const ratio =
      side === 'off'
        ? ''
        : ` → ÷ off ${(c.mainThread / counted.off.mainThread).toFixed(3)} main thread` +
          `, ${(c.total / counted.off.total).toFixed(3)} all threads${GOALS[side] ? ` (goal ≤ ${GOALS[side]})` : ''}`;
    console.log(`  ${side.padEnd(5)} ${m(c.mainThread)} main thread (${m(c.total)} all threads)${ratio}`);
  }
} finally {
  await otlp.close();
  rmSync(dir, { recursive: true, force: true });
}
process.exit(0);
