/**
 * How fast the JSON shape guard (http/json-shape.ts) reads a large body, against reading its bytes
 * at all: a 13 MB base64 string (an attachment sent inline) fed in 64 KiB chunks, as a request
 * streams in. Two control sides: `JSON.parse` of the same body (what reads it after the guard
 * let it through), and one pass over the same chunks that looks at every byte (`indexOf` of a
 * byte that is not there). The report is the guard's time over each control's, from the same run,
 * the sides' order rotating each round, and each side's MB/s. Nothing is asserted: the fast test
 * (services/api/test/fast/json-shape.test.ts) only checks that the guard is not quadratic.
 *
 *   BENCH_ROUNDS   rounds (default 7), after one warm-up round
 *   BENCH_REPEATS  passes of the guard and of the byte scan per timing (default 50; JSON.parse, a
 *                  hundred times slower, runs once)
 */
import { JsonShapeGuard, type JsonShapeLimits } from '../src/http/json-shape.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const REPEATS = Number(process.env.BENCH_REPEATS ?? 50);
const LIMITS: JsonShapeLimits = { maxDepth: 8, maxValues: 20, lists: { to: 3 } };
const CHUNK = 65_536;
const body = Buffer.from(`{"attachment":{"base64":"${'QUFB'.repeat(3_400_000)}"}}`);
const chunks: Buffer[] = [];
for (let i = 0; i < body.length; i += CHUNK) chunks.push(body.subarray(i, i + CHUNK));
const text = body.toString('utf8');

const sides: Record<string, () => void> = {
  guard: () => {
    const guard = new JsonShapeGuard(LIMITS);
    for (const c of chunks) guard.feed(c);
  },
  parse: () => {
    if (!JSON.parse(text)) throw new Error('nothing parsed');
  },
  bytes: () => {
    let found = 0;
    for (const c of chunks) if (c.indexOf(0x07) >= 0) found++;
    if (found) throw new Error('the control found a byte that is not there');
  },
};

const times: Record<string, number[]> = { guard: [], parse: [], bytes: [] };
const names = Object.keys(sides);
for (let round = -1; round < ROUNDS; round++) {
  const shift = ((round % names.length) + names.length) % names.length;
  const order = [...names.slice(shift), ...names.slice(0, shift)];
  for (const name of order) {
    const started = performance.now();
    const repeats = name === 'parse' ? 1 : REPEATS;
    for (let r = 0; r < repeats; r++) sides[name]!();
    const ms = (performance.now() - started) / repeats;
    if (round >= 0) times[name]!.push(ms);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const mb = body.length / 1e6;
for (const name of names)
  console.log(
    `${name.padEnd(8)} median ${median(times[name]!).toFixed(1)} ms (${(mb / (median(times[name]!) / 1000)).toFixed(0)} MB/s)`,
  );
for (const control of ['parse', 'bytes']) {
  const ratios = times.guard!.map((g, i) => g / times[control]![i]!);
  console.log(
    `guard / ${control}: median ${median(ratios).toFixed(2)}, rounds ${ratios.map((r) => r.toFixed(2)).join(' ')}`,
  );
}
