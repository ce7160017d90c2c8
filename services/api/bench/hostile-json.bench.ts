/**
 * How an API that refuses hostile JSON bodies while they stream (15 MB of "[" or of nested objects,
 * http/json-shape.ts) keeps answering other requests meanwhile: /healthz's latency while twelve such
 * uploads run, four at a time, against the same probing of the same API process with no upload
 * (the control side, for as long as the uploads took), in the same run, the two sides' order
 * alternating each round; and how long each refusal took. Nothing is asserted: the test
 * (services/api/test/hostile-json.test.ts) checks the refusals and a bounded event-loop stall, with
 * room for a loaded machine; these are the figures to compare between commits on a quiet one.
 *
 *   BENCH_ROUNDS  rounds (default 5), after one warm-up upload of each body
 */
import { closeRedis, createRedis, waitForRedis } from '@mgw/common';
import { TokenStore } from '@mgw/store';
import { startApiProcess } from '../test/helpers/api-process.js';
import { head, rawRequest } from '../test/helpers/raw-http.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
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
const sides: Record<'hostile' | 'control', number[]> = { hostile: [], control: [] };
const rows: string[] = [];
let lastMs = 1000;

try {
  await Promise.all([upload(brackets), upload(objects)]); // warm-up
  for (let round = 0; round < ROUNDS; round++) {
    const hostile = async () => {
      const { latencies, ms } = await probed(async () => {
        for (let batch = 0; batch < 3; batch++) {
          const answers = await Promise.all([brackets, objects, brackets, objects].map(upload));
          for (const a of answers) {
            if (a.status !== 400) throw new Error(`a hostile body answered ${a.status}`);
            refusals.push(a.answeredMs);
          }
        }
      });
      lastMs = ms;
      sides.hostile.push(...latencies);
      return latencies;
    };
    const control = async () => {
      const { latencies } = await probed(() => new Promise((r) => setTimeout(r, lastMs)));
      sides.control.push(...latencies);
      return latencies;
    };
    const [first, second] = round % 2 === 0 ? [hostile, control] : [control, hostile];
    const a = await first();
    const b = await second();
    const [h, c] = round % 2 === 0 ? [a, b] : [b, a];
    rows.push(
      `round ${round + 1}: /healthz p50 ${percentile(h, 0.5).toFixed(1)} ms with uploads, ` +
        `${percentile(c, 0.5).toFixed(1)} ms without (${(percentile(h, 0.5) / percentile(c, 0.5)).toFixed(2)})`,
    );
  }
} catch (err) {
  console.error(api.output.slice(-20).join('\n'));
  throw err;
} finally {
  await api.stop();
}

for (const row of rows) console.log(row);
for (const side of ['hostile', 'control'] as const) {
  const xs = sides[side];
  console.log(
    `${side === 'hostile' ? 'with uploads   ' : 'without uploads'}: ${xs.length} probes of /healthz, ` +
      `p50 ${percentile(xs, 0.5).toFixed(1)} ms, p99 ${percentile(xs, 0.99).toFixed(1)} ms, max ${Math.max(...xs).toFixed(1)} ms`,
  );
}
console.log(
  `ratio with / without uploads: p50 ${(percentile(sides.hostile, 0.5) / percentile(sides.control, 0.5)).toFixed(2)}, ` +
    `p99 ${(percentile(sides.hostile, 0.99) / percentile(sides.control, 0.99)).toFixed(2)}`,
);
console.log(
  `${refusals.length} refusals of ~15 MB bodies: median ${percentile(refusals, 0.5).toFixed(1)} ms, ` +
    `max ${Math.max(...refusals).toFixed(1)} ms`,
);
