/**
 * What the one reading of a path costs each request (issue 78: "the accept path costs no more
 * instructions per /send than before, ±2 %"): instructions per request of the path filter every
 * request now meets (http/canonical-path.ts) and of the path rule it replaced in the token guard
 * (the workspace-route pattern the guard tested on `req.path` for every device and old-shape
 * token). Each side runs in its own process under callgrind: a warm-up of 200,000 calls, a dump of
 * the counters, then BENCH_CALLS calls (1,000,000) counted on the main thread alone, between two
 * dumps, so start-up and warm-up never enter the count. A no-op handler is the control side (the
 * loop's own cost, subtracted from both); the order rotates each round. A `/send` costs about 700 k
 * instructions on the main thread (docs/benchmarks.md), against which the difference is put.
 * Needs `valgrind`.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { callgrindDump, callgrindWrapper, TSX_ARGS, valgrindAvailable } from '@mgw/testing';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const CALLS = Number(process.env.BENCH_CALLS ?? 1_000_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
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
  control: (_req: { url: string }, _res: unknown, next: () => void) => next(),
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

/** The main thread's instructions for CALLS calls of one side (after its warm-up). */
async function instructions(side: string): Promise<number> {
  const [command, ...args] = [
    ...callgrindWrapper(dir, side),
    process.execPath,
    ...TSX_ARGS,
    script,
    side,
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

const sides = ['control', 'filter', 'before'];
const perCall: Record<string, number[]> = { control: [], filter: [], before: [] };
for (let round = 0; round < ROUNDS; round++) {
  const order = sides.map((_, i) => sides[(i + round) % sides.length]!);
  for (const side of order) perCall[side]!.push(await instructions(side));
}
rmSync(dir, { recursive: true, force: true });
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const control = median(perCall.control!);
const net = (side: string) => median(perCall[side]!) - control;
console.log(
  `path-guard: instructions per call, main thread (${CALLS} calls, ${ROUNDS} rounds, control subtracted)`,
);
console.log(
  `  control (no-op handler): ${control.toFixed(0)} (rounds: ${perCall.control!.map((x) => x.toFixed(0)).join(', ')})`,
);
for (const side of ['filter', 'before']) {
  console.log(
    `  ${side === 'filter' ? 'the path filter (now)' : 'the workspace-route rule (before)'}: ${net(side).toFixed(0)}` +
      ` (rounds: ${perCall[side]!.map((x) => (x - control).toFixed(0)).join(', ')})`,
  );
}
const delta = net('filter') - net('before');
console.log(
  `  now − before: ${delta.toFixed(0)} instructions per request = ${((100 * delta) / SEND_INSTRUCTIONS).toFixed(3)} % of a /send (${SEND_INSTRUCTIONS / 1000} k)`,
);
