/**
 * What the one reading of a path costs each request (issue 78: "the accept path costs no more
 * instructions per /send than before, ±2 %"): instructions per request of the path filter every
 * request now meets (http/canonical-path.ts) and of the path rule it replaced in the token guard
 * (the workspace-route pattern the guard tested on `req.path` for every device and old-shape
 * token). Each side runs in its own process under callgrind: a warm-up of 200,000 calls, a dump of
 * the counters, then BENCH_CALLS calls (1,000,000) counted on the main thread alone, between two
 * dumps, so start-up and warm-up never enter the count. A no-op handler gives the loop's own cost,
 * subtracted from both; the control is the rule before counted again in a process of its own; the
 * order rotates each round (libs/testing side-by-side.ts; BENCH_ROUNDS rounded up to a multiple of
 * the 4 sides). A `/send` costs about 700 k instructions on the main thread (docs/benchmarks.md),
 * against which the difference and the control's floor are put: no verdict on ±2 % when the floor
 * is wider.
 * Needs `valgrind`.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import {
  callgrindDump,
  callgrindWrapper,
  SideBySide,
  TSX_ARGS,
  valgrindAvailable,
  verdict,
} from '@mgw/testing';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const CALLS = Number(process.env.BENCH_CALLS ?? 1_000_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const SEND_INSTRUCTIONS = 700_000;
if (!valgrindAvailable())
  throw new Error('path-guard: needs valgrind on the PATH (apt-get install valgrind)');

const dir = mkdtempSync(path.join(tmpdir(), 'mgw-path-guard-'));
const script = path.join(dir, 'calls.mts');
writeFileSync(
  script,
  `import { createInterface } from 'node:readline';
import { canonicalPath } from ${JSON.stringify(path.join(ROOT, 'services/api/src/http/canonical-path.ts'))};
// The rule the token guard tested before (auth.ts, 2026-11-29: WORKSPACE_PATH on req.path).
const WORKSPACE_PATH = /\\/(?:devices|tokens|workspace)(?:\\/|$)/;
const [side, calls] = [process.argv[2], Number(process.argv[3])];
const filter = canonicalPath();
const handlers = {
  noop: (_req: { url: string }, _res: unknown, next: () => void) => next(),
  filter: (req: { url: string }, res: unknown, next: () => void) => filter(req as never, res as never, next),
  before: (req: { url: string }, _res: unknown, next: () => void) => (WORKSPACE_PATH.test(req.url), next()),
};
const handler = handlers[side as keyof typeof handlers];
const reqs = ['/api/messenger/v1/send', '/api/messenger/v1/devices/d0123456789abcdef/send', '/api/messenger/v1/messages/3EB0AAAAAAAAAAAAAAAAAAAA'].map((url) => ({ url }));
const res = { locals: {} };
let passed = 0;
const next = () => void passed++;
const run = (n: number) => { for (let i = 0; i < n; i++) handler(reqs[i % 3]!, res, next); };
run(200_000);
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
console.log('warm');
await lines.next();
run(calls);
console.log('done');
await lines.next();
if (passed !== 200_000 + calls) throw new Error('a canonical path was refused');
`,
);

/** The main thread's instructions for CALLS calls of one handler (after its warm-up); `side` names the run. */
async function instructions(handler: string, side: string): Promise<number> {
  const [command, ...args] = [
    ...callgrindWrapper(dir, side),
    process.execPath,
    ...TSX_ARGS,
    script,
    handler,
    String(CALLS),
  ];
  const child = spawn(command!, args, { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const expect = async (word: string) => {
    const line = await lines.next();
    if (line.value !== word) throw new Error(`${side}: expected "${word}", got ${String(line.value)}`);
  };
  await expect('warm');
  await callgrindDump(dir, side, child.pid!);
  child.stdin!.write('go\n');
  await expect('done');
  const counted = await callgrindDump(dir, side, child.pid!);
  child.stdin!.end('exit\n');
  await once(child, 'exit');
  return counted.mainThread / CALLS;
}

// The baseline is the rule before; the control, the same rule counted again in a process of its
// own; `noop` is the loop's own cost, subtracted from the rule's and the filter's.
type Side = 'before' | 'control' | 'filter' | 'noop';
const handlerOf: Record<Side, string> = {
  before: 'before',
  control: 'before',
  filter: 'filter',
  noop: 'noop',
};
const rounds = new SideBySide<Side>({
  baseline: 'before',
  control: 'control',
  others: ['filter', 'noop'],
  rounds: ROUNDS,
});
await rounds.run(async (side, round) => ({
  perCall: await instructions(handlerOf[side], `${side}-${round}`),
}));
rmSync(dir, { recursive: true, force: true });
const noop = rounds.median('noop', 'perCall');
const net = (side: Side) => rounds.median(side, 'perCall') - noop;
console.log(`path-guard: instructions per call, main thread (${CALLS} calls; ${rounds.describe()})`);
for (const line of rounds.report({ metric: 'perCall', label: 'instructions per call' }))
  console.log(`  ${line}`);
console.log(
  `  less the no-op loop (${noop.toFixed(0)}): the path filter (now) ${net('filter').toFixed(0)}, ` +
    `the workspace-route rule (before) ${net('before').toFixed(0)}, its control ${net('control').toFixed(0)}`,
);
const delta = net('filter') - net('before');
console.log(
  `  now − before: ${delta.toFixed(0)} instructions per request = ${((100 * delta) / SEND_INSTRUCTIONS).toFixed(3)} % of a /send (${SEND_INSTRUCTIONS / 1000} k)`,
);
// Issue 78's ±2 % of a /send: the floor is the control's difference from the rule, on that scale.
const floor = Math.abs(net('control') - net('before')) / SEND_INSTRUCTIONS;
console.log(
  `  ${verdict('a /send with the filter ÷ with the rule before', 1 + delta / SEND_INSTRUCTIONS, floor, { min: 0.98, max: 1.02 })}`,
);
