#!/usr/bin/env node
/**
 * `npm run bench`: runs every `libs/*\/bench/*.bench.ts`, `services/*\/bench/*.bench.ts` and `bench/*.bench.ts`
 * (or only those whose path contains an argument) one after another. Benchmarks print ratios
 * against a baseline measured in the same run; they never pass or fail on absolute times.
 * They need a Redis: REDIS_URL, or a private redis-server started here (run through tsx, so the
 * test kit's source is imported directly).
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startRedisServer } from '@mgw/testing/redis-server';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const filter = process.argv.slice(2);
const files = ['libs', 'services']
  .flatMap((group) =>
    readdirSync(path.join(ROOT, group)).flatMap((pkg) => {
      const dir = path.join(group, pkg, 'bench');
      if (!existsSync(path.join(ROOT, dir))) return [];
      return readdirSync(path.join(ROOT, dir))
        .filter((f) => f.endsWith('.bench.ts'))
        .map((f) => path.join(dir, f));
    }),
  )
  // The repository's own benches (bench/: a fresh clone's first start, the processes' memory).
  .concat(
    readdirSync(path.join(ROOT, 'bench'))
      .filter((f) => f.endsWith('.bench.ts'))
      .map((f) => path.join('bench', f)),
  )
  .filter((f) => filter.length === 0 || filter.some((x) => f.includes(x)));

const env = { ...process.env };
// The services refuse to start without a key; a benchmark's data is thrown away, so is its key.
env.MGW_ENCRYPTION_KEY ||= `bench:${randomBytes(32).toString('base64')}`;
const redis = env.REDIS_URL ? undefined : await startRedisServer();
if (redis) env.REDIS_URL = redis.url;

let failed = 0;
for (const file of files) {
  console.log(`\n## ${file}`);
  const r = spawnSync(process.execPath, ['--conditions=development', '--import', 'tsx', file], {
    cwd: ROOT,
    env,
    stdio: 'inherit',
  });
  if (r.status !== 0) failed++;
}
if (files.length === 0) console.log('no benchmarks found');
await redis?.stop();
process.exit(failed ? 1 : 0);
