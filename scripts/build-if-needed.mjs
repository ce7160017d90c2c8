/**
 * Builds the workspace (`npx lerna run build`) when a package's build is missing or older than its
 * sources (`@mgw/testing/build-state`), and only then. `npm start` calls it before it starts the
 * services; `npm test` runs it before mocha, so the suite's stacks start each service from the
 * build as production does (runFromBuild in the test kit) rather than through tsx.
 *
 * As a command: exits 1 when the build fails.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildNeeded } from '@mgw/testing/build-state';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Builds when needed; answers whether the build is now current. `say` reports what it does. */
export function buildIfNeeded(say = (msg) => process.stderr.write(`${msg}\n`)) {
  if (!buildNeeded(ROOT)) return true;
  say('building (npx lerna run build)…');
  const r = spawnSync('npx', ['lerna', 'run', 'build', '--loglevel', 'warn'], {
    cwd: ROOT,
    stdio: 'inherit',
    env: { ...process.env, NX_DAEMON: 'false', NX_NO_CLOUD: 'true' },
  });
  return r.status === 0;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (!buildIfNeeded((msg) => process.stderr.write(`[build] ${msg}\n`))) {
    process.stderr.write('[build] the build failed (see above)\n');
    process.exit(1);
  }
}
