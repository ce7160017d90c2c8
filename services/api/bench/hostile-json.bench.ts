/**
 * How an API that refuses hostile JSON bodies while they stream (15 MB of "[" or of nested objects,
 * http/json-shape.ts) keeps answering other requests meanwhile: /healthz's latency while twelve such
 * uploads run, four at a time, against the same probing of the same API process with no upload
 * (the baseline, for as long as the uploads took) and that probing again as a side of its own (the
 * control: the noise floor), in the same run, the sides' order rotating each round (libs/testing
 * side-by-side.ts); and how long each refusal took. Nothing is asserted: the test
 * (services/api/test/hostile-json.test.ts) checks the refusals and a bounded event-loop stall, with
 * room for a loaded machine; these are the figures to compare between commits on a quiet one.
 *
 *   BENCH_ROUNDS  rounds (default 6, rounded up to a multiple of the 3 sides), after one warm-up
 *                 upload of each body
 */
import { closeRedis, createRedis, waitForRedis } from '@mgw/common';
import { TokenStore } from '@mgw/store';
import { SideBySide } from '@mgw/testing';
import { startApiProcess } from '../test/helpers/api-process.js';
import { head, rawRequest } from '../test/helpers/raw-http.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const SEND = '/api/messenger/v1/send';

const redis = createRedis(process.env.REDIS_URL!, 'producer', 'hostile-json-bench');
await waitForRedis(redis, 5000);
const token = (await new TokenStore(redis).create({ name: 'hostile-json bench' })).value;
await closeRedis(redis);
// Sixty-odd uploads of one token: over the default /send rate limit, which is not what is measured.
const api = await startApiProcess({ RATE_LIMIT_SEND: '100000' });

const brackets = Buffer.alloc(14_800_000, '[');
const objects = Buffer.from('{"a":'.repeat(3_000_000));
const upload = (body: Buffer) =>
  rawRequest(
    api.url,
    [
      head('POST', SEND, {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        'content-length': body.length,
      }),
      body,
    ],
    { untilAnswered: true },
  );

/** /healthz's latencies (ms) while `work` runs, and how long it ran. */
async function probed(work: () => Promise<unknown>): Promise<{ latencies: number[]; ms: number }> {
  const latencies: number[] = [];
  let probing = true;
  const probe = (async () => {
    while (probing) {
      const started = performance.now();
      await fetch(`${api.url}/healthz`);
      latencies.push(performance.now() - started);
      await new Promise((r) => setTimeout(r, 2));
    }
  })();
  const started = performance.now();
  try {
    await work();
  } finally {
    probing = false;
    await probe;
  }
  return { latencies, ms: performance.now() - started };
}

const percentile = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) * p)]!;
const refusals: number[] = [];
type Side = 'idle' | 'control' | 'hostile';
const probes: Record<Side, number[]> = { idle: [], control: [], hostile: [] };
const rounds = new SideBySide<Side>({
  baseline: 'idle',
  control: 'control',
  others: ['hostile'],
  rounds: ROUNDS,
});
let lastMs = 1000;

/** Twelve hostile uploads, four at a time, each refused with 400. */
async function uploads(): Promise<void> {
  for (let batch = 0; batch < 3; batch++) {
    const answers = await Promise.all([brackets, objects, brackets, objects].map(upload));
    for (const a of answers) {
      if (a.status !== 400) throw new Error(`a hostile body answered ${a.status}`);
      refusals.push(a.answeredMs);
    }
  }
}

try {
  await Promise.all([upload(brackets), upload(objects)]); // warm-up
  await rounds.run(async (side) => {
    // Without uploads, the probing lasts as long as the last uploads did.
    const { latencies, ms } = await probed(
      side === 'hostile' ? uploads : () => new Promise((r) => setTimeout(r, lastMs)),
    );
    if (side === 'hostile') lastMs = ms;
    probes[side].push(...latencies);
    return { p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99) };
  });
} catch (err) {
  console.error(api.output.slice(-20).join('\n'));
  throw err;
} finally {
  await api.stop();
}

console.log(`/healthz probed every 2 ms; idle and control: no upload; ${rounds.describe()}`);
for (const line of rounds.report({ metric: 'p50', label: '/healthz p50 ms', digits: 1 })) console.log(line);
for (const line of rounds.report({ metric: 'p99', label: '/healthz p99 ms', digits: 1 })) console.log(line);
for (const side of rounds.sides) {
  const xs = probes[side];
  console.log(
    `${side.padEnd(8)}: ${xs.length} probes of /healthz, p50 ${percentile(xs, 0.5).toFixed(1)} ms, ` +
      `p99 ${percentile(xs, 0.99).toFixed(1)} ms, max ${Math.max(...xs).toFixed(1)} ms`,
  );
}
console.log(
  `${refusals.length} refusals of ~15 MB bodies: median ${percentile(refusals, 0.5).toFixed(1)} ms, ` +
    `max ${Math.max(...refusals).toFixed(1)} ms`,
);
