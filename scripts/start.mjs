#!/usr/bin/env node
/**
 * `npm start`: builds if needed, makes sure Redis is there (and says which), and runs every
 * service as its own process under this small supervisor (the same commands containers run).
 * Ctrl-C (or SIGTERM) stops the services first — they drain and release their devices — then the
 * Redis it started.
 *
 * Nothing outlives it, however it is stopped: SIGINT or SIGTERM to npm reach this process (the
 * `start` script `exec`s it, so no shell sits between npm, which forwards both, and here); when
 * its parent goes (npm killed with SIGKILL, say) it stops everything as for SIGTERM; its children
 * run with the orphan guard (libs/testing/orphan-guard.mjs), so a SIGKILLed supervisor still takes
 * them down; and a child that exits (`kill <api pid>`) stops everything, exit code 1.
 *
 * MESSENGER_SANDBOX=1 also starts the WhatsApp Web simulator and points the services at it.
 * MGW_ALL_IN_ONE=1 (or `npm start -- --all-in-one`) runs the four services as one process instead
 * (services/all-in-one: the same code, less memory; for a small install — docs/operations.md).
 * Without MGW_ENCRYPTION_KEY, the key that seals credentials and messages in Redis is created once
 * under the data directory (next to the Redis data it protects) and reused on every start.
 * Anything that cannot start (no build, no simulator, no Redis) stops it with exit code 1 and a
 * message that says how to fix it: it never starts a partial gateway.
 *
 * Once every service answers its /readyz it prints one `ready:` line with the API's URL: from then
 * on requests are served (the connection service is ready only once the API would hand it work).
 * A service not ready within MGW_READY_TIMEOUT_MS (30 s) is named, with what its /readyz says, and
 * the wait goes on: a slow start (Redis loading its data, a busy machine) is not a failed one, and
 * a service that does fail exits, which stops everything as above.
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { nodeArgsOf } from '@mgw/testing/node-args';
import { buildNeeded } from '@mgw/testing/build-state';
import { buildIfNeeded, buildPlan } from './build-if-needed.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const say = (msg) => process.stderr.write(`[start] ${msg}\n`);
const fail = (msg, fix) => {
  say(msg);
  if (fix) say(fix);
  process.exit(1);
};
const env = { ...process.env };
env.REDIS_URL ??= 'redis://127.0.0.1:6379';
const sandboxMode = env.MESSENGER_SANDBOX === '1';
const allInOneFlag = process.argv.slice(2).includes('--all-in-one');
if (![undefined, '', '0', '1'].includes(env.MGW_ALL_IN_ONE))
  fail(`MGW_ALL_IN_ONE must be 1 or 0, not "${env.MGW_ALL_IN_ONE}"`);
const allInOne = allInOneFlag || env.MGW_ALL_IN_ONE === '1';

const SERVICES = [
  {
    name: 'api',
    entry: 'services/api/dist/main.js',
    env: { METRICS_PORT: env.API_METRICS_PORT ?? '9464' },
  },
  {
    name: 'connection',
    entry: 'services/connection/dist/main.js',
    env: { METRICS_PORT: env.CONNECTION_METRICS_PORT ?? '9465' },
  },
  {
    name: 'sender',
    entry: 'services/sender/dist/main.js',
    env: { METRICS_PORT: env.SENDER_METRICS_PORT ?? '9466' },
  },
  {
    name: 'notifier',
    entry: 'services/notifier/dist/main.js',
    env: { METRICS_PORT: env.NOTIFIER_METRICS_PORT ?? '9467' },
  },
];
/** The all-in-one process: the four services in one (its ops port is the API's). */
const ALL_IN_ONE = {
  name: 'all-in-one',
  entry: 'services/all-in-one/dist/main.js',
  env: { METRICS_PORT: env.API_METRICS_PORT ?? '9464' },
};
/** What this run starts: a process per service, or the one all-in-one process. */
const RUN = allInOne ? [ALL_IN_ONE] : SERVICES;
const SANDBOX = { name: 'sandbox', entry: 'libs/messenger-sim/dist/cli.js' };
const DATA_DIR = env.MGW_DATA_DIR ?? path.join(ROOT, '.data');
/** How long the services may take to be ready before the ones that are not are named. */
const READY_TIMEOUT_MS = Number(env.MGW_READY_TIMEOUT_MS ?? 30_000);
const KEY_LINE = /^[A-Za-z0-9_-]{1,16}:[A-Za-z0-9+/]{43}=$/;
const REDIS_SERVER = 'libs/testing/dist/redis-server.js';
const DASHBOARD = 'services/api/dist/dashboard/index.html';
/**
 * Preloaded into every process started here (never into the image's): it stops itself once this
 * supervisor is gone, even when nothing could tell it (SIGKILL).
 */
const ORPHAN_GUARD = ['--import', pathToFileURL(path.join(ROOT, 'libs/testing/orphan-guard.mjs')).href];

/**
 * The first line: the Node it runs on, whether `npm install` is current (the lock file npm wrote
 * into node_modules is not older than package-lock.json), and, when a build comes first, what it
 * builds and how long a first build usually takes.
 */
function checkInstall(building) {
  const installed = path.join(ROOT, 'node_modules/.package-lock.json');
  if (!existsSync(installed)) fail('dependencies are not installed', 'run `npm install`, then `npm start`');
  const stale = statSync(path.join(ROOT, 'package-lock.json')).mtimeMs > statSync(installed).mtimeMs;
  say(
    `node ${process.versions.node}; dependencies installed` +
      (stale ? ' (package-lock.json changed since: run `npm install` if the start fails)' : '') +
      (building ? `; ${buildPlan()}` : ''),
  );
}

/** Builds when needed, its output in the data directory's build.log (a failure shows its end). */
function buildOrFail(needed) {
  if (!buildIfNeeded(say, { logFile: path.join(DATA_DIR, 'build.log'), announced: true, needed }))
    fail('the build failed (see above)', 'fix it, or run `npm run build` to see it again');
}

/** Every entry point this run needs must exist after the build, or nothing starts. */
function requireBuilt() {
  const needed = [
    ...RUN.map((s) => s.entry),
    REDIS_SERVER,
    DASHBOARD,
    ...(sandboxMode ? [SANDBOX.entry] : []),
  ];
  const missing = needed.filter((entry) => !existsSync(path.join(ROOT, entry)));
  if (missing.length > 0) {
    fail(
      `missing build output: ${missing.join(', ')}${sandboxMode ? ' (sandbox mode needs the simulator)' : ''}`,
      'run `npm run build` (after `npm install`) and start again',
    );
  }
}

const children = [];
let stopping = false;

function startChild(name, entry, childEnv) {
  const child = spawn(process.execPath, [...ORPHAN_GUARD, ...nodeArgsOf(name), entry], {
    cwd: ROOT,
    env: childEnv,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  children.push({ name, child });
  child.once('exit', (code, signal) => {
    if (!stopping) {
      say(`${name} exited (${signal ?? code}); stopping everything`);
      void stopAll(1);
    }
  });
  return child;
}

/**
 * With REDIS_CLUSTER_NODES the services use that Redis Cluster (REDIS_URL is ignored), with
 * REDIS_SENTINELS the master those sentinels name: nothing is started here, and one no seed or
 * sentinel answers for stops the start, as a missing Redis does.
 */
async function ensureRedis() {
  const { canConnect, startRedisServer } = await import(pathToFileURL(path.join(ROOT, REDIS_SERVER)).href);
  if (env.REDIS_SENTINELS?.trim()) {
    const sentinels = await someReachable(
      canConnect,
      env.REDIS_SENTINELS,
      'Redis Sentinel',
      'REDIS_SENTINELS',
    );
    const master = env.REDIS_SENTINEL_MASTER || 'mymaster';
    say(
      `redis: using the master "${master}" of the Redis Sentinels at ${sentinels.join(', ')} (REDIS_SENTINELS; REDIS_URL gives only its credentials)`,
    );
    return undefined;
  }
  if (env.REDIS_CLUSTER_NODES?.trim()) {
    const seeds = await someReachable(
      canConnect,
      env.REDIS_CLUSTER_NODES,
      'Redis Cluster node',
      'REDIS_CLUSTER_NODES',
    );
    say(`redis: using the Redis Cluster at ${seeds.join(', ')} (REDIS_CLUSTER_NODES; REDIS_URL is ignored)`);
    return undefined;
  }
  const url = new URL(env.REDIS_URL);
  const host = url.hostname || '127.0.0.1';
  const port = Number(url.port || 6379);
  if (await canConnect(host, port)) {
    say(`redis: using ${masked(url)} (REDIS_URL)`);
    return undefined;
  }
  const local = ['127.0.0.1', 'localhost', '::1'].includes(host);
  const which = spawnSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' });
  if (!local || which.status !== 0) {
    fail(
      `Redis is not reachable at ${url.host}.`,
      'Start one (e.g. `apt-get install redis-server`, `brew install redis`, or `docker run -p 6379:6379 redis:7`) ' +
        'or set REDIS_URL to a running Redis 7 (AOF on, maxmemory-policy noeviction).',
    );
  }
  const dataDir = path.join(DATA_DIR, 'redis');
  const started = await startRedisServer({ port, dataDir, stopWithParent: true });
  const shown = dataDir.startsWith(ROOT + path.sep) ? path.relative(ROOT, dataDir) : dataDir;
  say(`redis: started redis-server on 127.0.0.1:${port}, data in ${shown} (AOF on; it stops with npm start)`);
  return started;
}

/**
 * The `host:port` list of `variable`; stops the start, naming it, when no entry accepts a
 * connection (a Cluster's seeds or a Sentinel's sentinels: one that answers is enough).
 */
async function someReachable(canConnect, list, what, variable) {
  const entries = list
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const reachable = await Promise.all(
    entries.map((entry) => {
      const at = entry.lastIndexOf(':');
      const port = Number(entry.slice(at + 1));
      return at > 0 && port > 0 ? canConnect(entry.slice(0, at), port) : false;
    }),
  );
  if (!reachable.some(Boolean)) {
    fail(
      `No ${what} is reachable at ${entries.join(', ')} (${variable}).`,
      variable === 'REDIS_SENTINELS'
        ? 'Set REDIS_SENTINELS to host:port of running sentinels, or unset it to use REDIS_URL.'
        : 'Set REDIS_CLUSTER_NODES to host:port seeds of a running Redis Cluster, or unset it to use REDIS_URL.',
    );
  }
  return entries;
}

/** A Redis URL as it may be printed: its password (if any) masked. */
function masked(url) {
  const shown = new URL(url.href);
  if (shown.password) shown.password = '***';
  return shown.href.replace(/\/$/, '');
}

/**
 * The key the services seal with: MGW_ENCRYPTION_KEY when set, else `<data dir>/encryption.key`,
 * made once (0600, created exclusively so two starts cannot make two keys). It is never printed:
 * losing it loses every linked device, so back it up with the Redis data.
 */
function ensureEncryptionKey() {
  if (env.MGW_ENCRYPTION_KEY) return;
  const file = path.join(DATA_DIR, 'encryption.key');
  if (!existsSync(file)) {
    mkdirSync(DATA_DIR, { recursive: true });
    const id = `local-${new Date().toISOString().slice(0, 10).replace(/-/g, '')}`;
    try {
      writeFileSync(file, `${id}:${randomBytes(32).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
      say(`generated a key at ${file}`);
    } catch (err) {
      if (err.code !== 'EEXIST')
        fail(`could not write ${file}: ${err.message}`, 'set MGW_DATA_DIR to a writable directory');
    }
  }
  const line = readFileSync(file, 'utf8').trim();
  if (!KEY_LINE.test(line)) {
    fail(
      `${file} does not hold a key line (<keyId>:<base64 of 32 bytes>)`,
      'restore it from your backup, or set MGW_ENCRYPTION_KEY (the data sealed under a lost key cannot be read)',
    );
  }
  env.MGW_ENCRYPTION_KEY = line;
}

/**
 * The dashboard's password: ADMIN_PASSWORD when set, else `<data dir>/admin-password`, made once
 * (0600, exclusively) and printed only then; later starts say where it is.
 */
function ensureAdminPassword() {
  if (env.ADMIN_PASSWORD) return {};
  const file = path.join(DATA_DIR, 'admin-password');
  let made = false;
  if (!existsSync(file)) {
    mkdirSync(DATA_DIR, { recursive: true });
    try {
      writeFileSync(file, `${randomBytes(18).toString('base64url')}\n`, { mode: 0o600, flag: 'wx' });
      made = true;
    } catch (err) {
      if (err.code !== 'EEXIST')
        fail(`could not write ${file}: ${err.message}`, 'set MGW_DATA_DIR to a writable directory');
    }
  }
  const password = readFileSync(file, 'utf8').trim();
  if (password.length < 12)
    fail(`${file} holds no password of 12+ characters`, 'delete it to make a new one');
  env.ADMIN_PASSWORD = password;
  return { made, file };
}

/** An address of this machine the services answer on: HOST, or loopback when HOST is every interface. */
function localAddress() {
  return ['0.0.0.0', '::', ''].includes(env.HOST ?? '') ? '127.0.0.1' : env.HOST;
}

/**
 * Where the services listen: this machine only unless HOST says otherwise (a laptop's `npm start`
 * must not serve its network); containers and k8s/ set HOST=0.0.0.0 themselves.
 */
function sayHost() {
  if (env.HOST) return say(`listening on ${env.HOST} (HOST): the API and every service's /metrics`);
  env.HOST = '127.0.0.1';
  say('listening on 127.0.0.1 only (HOST=0.0.0.0 npm start serves other machines too)');
}

function sayDashboard(admin) {
  const url = `http://${localAddress()}:${env.PORT ?? 3000}/dashboard`;
  if (admin.made)
    say(`dashboard: ${url} — password (shown once, kept in ${admin.file}): ${env.ADMIN_PASSWORD}`);
  else if (admin.file) say(`dashboard: ${url} — its password is in ${admin.file}`);
  else say(`dashboard: ${url} — sign in with ADMIN_PASSWORD`);
}

async function stopAll(code) {
  if (stopping) return;
  stopping = true;
  say('stopping services…');
  await Promise.all(
    children.map(
      ({ child }) =>
        new Promise((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', resolve);
          child.kill('SIGTERM');
          setTimeout(() => child.kill('SIGKILL'), 30_000).unref();
        }),
    ),
  );
  await redis?.stop();
  process.exit(code);
}

/**
 * npm (or whatever started this) gone — killed with SIGKILL, or a shell between it and here
 * killed — re-parents this process: that is a stop, as SIGTERM is. When a shell sits between npm
 * and here (a `start` script without `exec`, another script-shell), npm's own death re-parents
 * only that shell, so its parent is watched too. Read once a second; the timer keeps nothing alive.
 */
function watchParent() {
  const parent = process.ppid;
  const viaShell = env.npm_lifecycle_event !== undefined && /^(sh|dash|bash|zsh)$/.test(commandOf(parent));
  const grandparent = viaShell ? parentOf(parent) : undefined;
  const timer = setInterval(() => {
    const gone =
      process.ppid !== parent
        ? parent
        : grandparent !== undefined && parentOf(parent) !== grandparent
          ? grandparent
          : 0;
    if (!gone) return;
    clearInterval(timer);
    say(`its parent (pid ${gone}) is gone; stopping everything`);
    void stopAll(1);
  }, 1_000);
  timer.unref();
}

/** A process's parent, from /proc (Linux) or ps; undefined once it is gone. */
function parentOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    const ps = spawnSync('ps', ['-o', 'ppid=', '-p', String(pid)], { encoding: 'utf8' });
    return ps.status === 0 ? Number(ps.stdout.trim()) : undefined;
  }
}

/** A process's command name (`sh`, `node`…), or '' when it cannot be read. */
function commandOf(pid) {
  const ps = spawnSync('ps', ['-o', 'comm=', '-p', String(pid)], { encoding: 'utf8' });
  return ps.status === 0 ? ps.stdout.trim() : '';
}

async function startSandbox() {
  const port = env.SANDBOX_PORT ?? '3100';
  // Its simulated phones and the devices linked to them outlive a restart, like the Redis data.
  const stateFile = env.SANDBOX_STATE_FILE ?? path.join(DATA_DIR, 'sandbox-state.json');
  startChild(SANDBOX.name, SANDBOX.entry, { ...env, SANDBOX_PORT: port, SANDBOX_STATE_FILE: stateFile });
  env.MESSENGER_SANDBOX_URL = `http://127.0.0.1:${port}`;
  env.SEND_MIN_GAP_MS ??= '0';
  // No real account to keep safe: no caps, warm-up or first-contact limit unless asked for.
  env.SEND_DAILY_CAP ??= '0';
  env.SEND_WARMUP_CAPS ??= 'off';
  env.SEND_FIRST_CONTACT_CAP ??= '0';
  const deadline = Date.now() + 15_000;
  while ((await fetch(`${env.MESSENGER_SANDBOX_URL}/health`).catch(() => undefined))?.ok !== true) {
    if (Date.now() > deadline || stopping) {
      say(`the sandbox simulator did not answer on ${env.MESSENGER_SANDBOX_URL}/health within 15 s`);
      say(`is port ${port} taken? set SANDBOX_PORT to a free one`);
      return stopAll(1);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  say(`sandbox simulator on ${env.MESSENGER_SANDBOX_URL} — no real WhatsApp is used`);
}

/** What a service's /readyz says: undefined when 200, else the reason it is not ready. */
async function notReady(url) {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
    if (res.status === 200) return undefined;
    const body = await res.json().catch(() => undefined);
    const reason = typeof body?.details?.reason === 'string' ? ` — ${body.details.reason}` : '';
    return `${res.status}${body?.error ? ` ${body.error}` : ''}${reason}`;
  } catch (err) {
    return err?.name === 'TimeoutError' ? 'no answer within 2 s' : 'not listening yet';
  }
}

/**
 * Polls every service's /readyz (its ops port) until all answer 200, then prints `ready:` once.
 * Every MGW_READY_TIMEOUT_MS it is still waiting, it names the services that are not ready.
 */
async function waitUntilReady() {
  const timeoutMs = READY_TIMEOUT_MS;
  const host = localAddress();
  const probes = RUN.map((s) => ({
    name: s.name,
    url: `http://${host}:${s.env.METRICS_PORT}/readyz`,
  }));
  const started = Date.now();
  const seen = new Set();
  let nextReport = started + timeoutMs;
  for (;;) {
    if (stopping) return;
    const reasons = await Promise.all(probes.map((p) => notReady(p.url)));
    if (stopping) return;
    const waiting = probes.map((p, i) => [p.name, reasons[i]]).filter(([, why]) => why !== undefined);
    // One line per service as it becomes ready: what a first start is waiting for is visible.
    for (const [i, p] of probes.entries()) {
      if (reasons[i] !== undefined || seen.has(p.name)) continue;
      seen.add(p.name);
      say(`${p.name}: ready after ${((Date.now() - started) / 1000).toFixed(1)} s`);
    }
    if (waiting.length === 0) {
      say(`ready: API on http://${host}:${env.PORT ?? 3000} (every service answers /readyz)`);
      return;
    }
    if (Date.now() >= nextReport) {
      const s = Math.round((Date.now() - started) / 1000);
      say(
        `not ready after ${s} s: ${waiting.map(([name, why]) => `${name} (/readyz: ${why})`).join(', ')}; ` +
          'still waiting (see its log above; Ctrl-C stops)',
      );
      nextReport += timeoutMs;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

if (!(READY_TIMEOUT_MS > 0)) fail('MGW_READY_TIMEOUT_MS must be a number of milliseconds above 0');
const building = buildNeeded(ROOT);
checkInstall(building);
buildOrFail(building);
requireBuilt();
ensureEncryptionKey();
const admin = ensureAdminPassword();
const redis = await ensureRedis();
process.on('SIGINT', () => void stopAll(0));
process.on('SIGTERM', () => void stopAll(0));
watchParent();
if (sandboxMode) await startSandbox();
sayHost();
for (const svc of RUN) startChild(svc.name, svc.entry, { ...env, ...svc.env });
say(`started: ${children.map((c) => c.name).join(', ')}; waiting until each answers /readyz`);
sayDashboard(admin);
await waitUntilReady();
