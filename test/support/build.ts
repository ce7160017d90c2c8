import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildNeeded } from '@mgw/testing/build-state';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * Builds every package as `npm start` would (`npx lerna run build`) when a `dist/` is missing or
 * older than its sources, or the dashboard's build is older than its sources — the same rule as
 * `scripts/start.mjs`, so a test that starts the supervisor afterwards finds nothing to build.
 */
export async function buildIfStale(): Promise<void> {
  if (!buildNeeded(ROOT)) return;
  await new Promise<void>((resolve, reject) => {
    const child = spawn('npx', ['lerna', 'run', 'build', '--loglevel', 'warn'], {
      cwd: ROOT,
      env: { ...process.env, NX_DAEMON: 'false', NX_NO_CLOUD: 'true' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0
        ? resolve()
        : reject(new Error(`npx lerna run build exited ${code}:\n${output.slice(-4000)}`)),
    );
  });
}
