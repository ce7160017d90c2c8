/**
 * Builds the workspace (`npx lerna run build`) when a package's build is missing or older than its
 * sources (`@mgw/testing/build-state`), and only then. `npm start` calls it before it starts the
 * services; `npm test` runs it before mocha, so the suite's stacks start each service from the
 * build as production does (runFromBuild in the test kit) rather than through tsx.
 *
 * As a command: exits 1 when the build fails.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildNeeded } from '@mgw/testing/build-state';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** What a first build of every package takes on 2 quiet cores (measured: `npm run bench -- first-start`). */
const FIRST_BUILD = 'about 40 s on 2 quiet cores, minutes on a busy machine';
const LERNA = ['lerna', 'run', 'build', '--loglevel', 'warn'];
const BUILD_ENV = { ...process.env, NX_DAEMON: 'false', NX_NO_CLOUD: 'true' };

/** The workspace packages lerna builds: those of libs/ and services/ with a `build` script. */
export function buildablePackages(root = ROOT) {
  return ['libs', 'services'].flatMap((group) =>
    readdirSync(path.join(root, group)).filter((name) => {
      const manifest = path.join(root, group, name, 'package.json');
      return existsSync(manifest) && Boolean(JSON.parse(readFileSync(manifest, 'utf8')).scripts?.build);
    }),
  );
}

/** What a build about to run does and usually takes, for the line that announces it. */
export function buildPlan() {
  return `building ${buildablePackages().length} packages first (a first build takes ${FIRST_BUILD})`;
}

/**
 * Builds when needed; answers whether the build is now current. `say` reports what it does. With
 * `logFile`, lerna's output goes there instead of the terminal: one line before (`buildPlan()` and
 * where its output goes; none when the caller `announced` the plan itself), one after (how long it
 * took), and on a failure the log's last lines and its path. `needed`: the caller's answer of
 * `buildNeeded` (it walks every package's files), when it asked already.
 */
export function buildIfNeeded(
  say = (msg) => process.stderr.write(`${msg}\n`),
  { logFile, announced, needed = buildNeeded(ROOT) } = {},
) {
  if (!needed) return true;
  if (!logFile) {
    say('building (npx lerna run build)…');
    return spawnSync('npx', LERNA, { cwd: ROOT, stdio: 'inherit', env: BUILD_ENV }).status === 0;
  }
  const count = buildablePackages().length;
  const shown = path.relative(process.cwd(), logFile) || logFile;
  if (!announced) say(`${buildPlan()}; its output: ${shown}`);
  mkdirSync(path.dirname(logFile), { recursive: true });
  const fd = openSync(logFile, 'w');
  const started = Date.now();
  const r = spawnSync('npx', LERNA, { cwd: ROOT, stdio: ['ignore', fd, fd], env: BUILD_ENV });
  closeSync(fd);
  const seconds = ((Date.now() - started) / 1000).toFixed(0);
  if (r.status === 0) {
    say(`built ${count} packages in ${seconds} s (its output: ${shown})`);
    return true;
  }
  const tail = readFileSync(logFile, 'utf8').trimEnd().split('\n').slice(-15);
  say(`the build failed after ${seconds} s; the last lines of ${shown}:`);
  for (const line of tail) say(`  ${line}`);
  return false;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (!buildIfNeeded((msg) => process.stderr.write(`[build] ${msg}\n`))) {
    process.stderr.write('[build] the build failed (see above)\n');
    process.exit(1);
  }
}
