/**
 * How fast the JSON shape guard (http/json-shape.ts) reads a large body, against reading its bytes
 * at all: a 13 MB base64 string (an attachment sent inline) fed in 64 KiB chunks, as a request
 * streams in. Two references: one pass over the same chunks that looks at every byte (`indexOf` of
 * a byte that is not there; the baseline) and `JSON.parse` of the same body (what reads it after
 * the guard let it through); the control is the byte pass again, timed as a side of its own. The
 * report is the guard's time over each reference's, from the same run, the sides' order rotating
 * each round (libs/testing side-by-side.ts), the control's ratio as the noise floor, and each
 * side's MB/s. Nothing is asserted: the fast test (services/api/test/fast/json-shape.test.ts) only
 * checks that the guard is not quadratic.
 *
 *   BENCH_ROUNDS   rounds (default 7, rounded up to a multiple of the 4 sides), after one
 *                  unmeasured round
 *   BENCH_REPEATS  passes of the guard and of the byte scan per timing (default 50; JSON.parse, a
 *                  hundred times slower, runs once)
 */
import { SideBySide } from '@mgw/testing';
import { JsonShapeGuard, type JsonShapeLimits } from '../src/http/json-shape.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const REPEATS = Number(process.env.BENCH_REPEATS ?? 50);
const LIMITS: JsonShapeLimits = { maxDepth: 8, maxValues: 20, lists: { to: 3 } };
const CHUNK = 65_536;
const body = Buffer.from(`{"attachment":{"base64":"${'QUFB'.repeat(3_400_000)}"}}`);
const chunks: Buffer[] = [];
for (let i = 0; i < body.length; i += CHUNK) chunks.push(body.subarray(i, i + CHUNK));
const text = body.toString('utf8');

const bytes = () => {
  let found = 0;
  for (const c of chunks) if (c.indexOf(0x07) >= 0) found++;
  if (found) throw new Error('the byte pass found a byte that is not there');
};
type Side = 'bytes' | 'control' | 'guard' | 'parse';
const sides: Record<Side, () => void> = {
  bytes,
  control: bytes,
  guard: () => {
    const guard = new JsonShapeGuard(LIMITS);
    for (const c of chunks) guard.feed(c);
  },
  parse: () => {
    if (!JSON.parse(text)) throw new Error('nothing parsed');
  },
};
/** One timing of a side: ms per pass. */
const time = (name: Side): number => {
  const started = performance.now();
  const repeats = name === 'parse' ? 1 : REPEATS;
  for (let r = 0; r < repeats; r++) sides[name]();
  return (performance.now() - started) / repeats;
};

for (const name of Object.keys(sides) as Side[]) time(name); // warm-up
const rounds = new SideBySide<Side>({
  baseline: 'bytes',
  control: 'control',
  others: ['guard', 'parse'],
  rounds: ROUNDS,
});
await rounds.run(async (name) => ({ ms: time(name) }));
const mb = body.length / 1e6;
console.log(`${mb.toFixed(1)} MB body; ${rounds.describe()}`);
for (const line of rounds.report({ metric: 'ms', label: 'ms per pass', digits: 1 })) console.log(line);
for (const name of rounds.sides)
  console.log(`  ${name.padEnd(8)} ${(mb / (rounds.median(name, 'ms') / 1000)).toFixed(0)} MB/s`);
console.log(`  ${rounds.ratioText('guard', 'ms', 'parse')}`);
