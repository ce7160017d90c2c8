/**
 * `npm run bench -- first-start`: what a newcomer waits for on a fresh clone. The committed tree
 * (git archive HEAD) is unpacked in a temp dir, `npm ci` runs there (the npm cache makes it the
 * registry-free part of `npm install`), then `MESSENGER_SANDBOX=1 npm start` runs twice: the first
 * start builds every package, the second finds the build current. Prints each step's seconds, the
 * build's share of the first start and the first start against the second (the baseline measured
 * in the same run). The goal: a first start within 60 s on a quiet 2-core machine.
 */
import { execSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sandboxEnv, startGateway } from './npm-start-run.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const tmp = mkdtempSync(path.join(os.tmpdir(), 'mgw-first-start-'));
const seconds = (ms: number) => (ms / 1000).toFixed(1);
try {
  execSync(`git -C ${JSON.stringify(ROOT)} archive --format=tar HEAD | tar -x -C ${JSON.stringify(tmp)}`);
  let t = Date.now();
  execSync('npm ci --no-audit --no-fund --prefer-offline', { cwd: tmp, stdio: 'ignore' });
  const installMs = Date.now() - t;
  const env = await sandboxEnv(path.join(tmp, '.data'));
  const first = await startGateway(tmp, env);
  const lines = first
    .output()
    .split('\n')
    .filter((l) => l.startsWith('[start]'));
  await first.stop();
  const built = /built (\d+) packages in (\d+) s/.exec(first.output());
  t = Date.now();
  const second = await startGateway(tmp, env);
  await second.stop();
  console.log('first start of a fresh clone (sandbox mode, its own Redis):');
  console.log(`  npm ci (npm cache warm): ${seconds(installMs)} s`);
  console.log(
    `  first npm start to ready: ${seconds(first.readyMs)} s (the build: ${built?.[2] ?? '?'} s for ${built?.[1] ?? '?'} packages)`,
  );
  console.log(`  second npm start to ready (build current; the baseline): ${seconds(second.readyMs)} s`);
  console.log(
    `  first / second start: ${(first.readyMs / second.readyMs).toFixed(2)}x; goal: first start ≤ 60 s on a quiet 2-core machine`,
  );
  console.log('  what the first start printed:');
  for (const line of lines)
    console.log(`    ${line.replace(/password \(shown once[^)]*\): \S+/, 'password (…)')}`);
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
