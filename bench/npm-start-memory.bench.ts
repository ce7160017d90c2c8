/**
 * `npm run bench -- npm-start-memory`: what the gateway's processes hold in memory under `npm start` with one
 * linked device, idle — the figures the README gives. Runs this checkout's build (built first when
 * stale) in sandbox mode, its own Redis and data, twice: the four services as processes, then as
 * the all-in-one process. After linking one device through the simulated phone it waits IDLE_MS
 * (60 s; MGW_BENCH_IDLE_MS to change it) and prints each service process's resident memory
 * (VmRSS) and their sum; the ratio of the two modes is measured in the same run.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { linkOneDevice, rssMiB, sandboxEnv, servicePids, startGateway } from './npm-start-run.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const IDLE_MS = Number(process.env.MGW_BENCH_IDLE_MS ?? 60_000);

const build = spawnSync(process.execPath, ['scripts/build-if-needed.mjs'], { cwd: ROOT, stdio: 'inherit' });
if (build.status !== 0) throw new Error('the build failed');
const totals: Record<string, number> = {};
for (const [mode, extra] of [
  ['four processes', {}],
  ['all-in-one', { MGW_ALL_IN_ONE: '1' }],
] as const) {
  const data = mkdtempSync(path.join(os.tmpdir(), 'mgw-memory-'));
  const gw = await startGateway(ROOT, await sandboxEnv(data, extra));
  try {
    await linkOneDevice(ROOT, gw);
    await new Promise((r) => setTimeout(r, IDLE_MS));
    const rows = [...servicePids(gw)].map(([name, pid]) => [name, rssMiB(pid)] as const);
    totals[mode] = rows.reduce((sum, [, mib]) => sum + mib, 0);
    console.log(`${mode}, one linked device, ${IDLE_MS / 1000} s idle (VmRSS):`);
    for (const [name, mib] of rows) console.log(`  ${name.padEnd(12)} ${mib.toFixed(0).padStart(5)} MiB`);
    console.log(`  ${'total'.padEnd(12)} ${totals[mode]!.toFixed(0).padStart(5)} MiB`);
  } finally {
    await gw.stop();
    rmSync(data, { recursive: true, force: true });
  }
}
console.log(
  `all-in-one / four processes: ${(totals['all-in-one']! / totals['four processes']!).toFixed(2)}x`,
);
