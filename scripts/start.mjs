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
 * MESSENGER_SANDBOX=1 also starts the WhatsApp Web simulator and the Cloud API simulator and points
 * the services at them.
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
 *
 * Its parts: which Redis (start-redis.mjs), the key and the dashboard's password kept under the
 * data directory (start-secrets.mjs), the watch on its parent (start-parent-watch.mjs), and what
 * they share with this supervisor (start-context.mjs).
 */
import { spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { nodeArgsOf } from '@mgw/testing/node-args';
import { buildNeeded } from '@mgw/testing/build-state';
import { buildIfNeeded, buildPlan } from './build-if-needed.mjs';
import { DATA_DIR, env, fail, ROOT, say } from './start-context.mjs';
import { ensureRedis, REDIS_SERVER } from './start-redis.mjs';
import { ensureAdminPassword, ensureEncryptionKey } from './start-secrets.mjs';
import { watchParent } from './start-parent-watch.mjs';

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
/** The Cloud API sandbox: a Graph API simulator for cloud devices (docs/cloud-api.md#the-sandbox). */
const CLOUD_SANDBOX = { name: 'cloud-sandbox', entry: 'libs/cloud-sim/dist/cli.js' };
/** How long the services may take to be ready before the ones that are not are named. */
const READY_TIMEOUT_MS = Number(env.MGW_READY_TIMEOUT_MS ?? 30_000);
const DASHBOARD = 'libs/console/dist/index.html';
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
    ...(sandboxMode ? [SANDBOX.entry, CLOUD_SANDBOX.entry] : []),
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
  await startCloudSandbox();
}

/**
 * The Cloud API's simulator beside WhatsApp Web's: cloud devices send to it (CLOUD_GRAPH_URL), and
 * its webhooks come to this gateway's Meta endpoint once a device holds the sandbox's verify token.
 */
async function startCloudSandbox() {
  const port = env.CLOUD_SANDBOX_PORT ?? '3101';
  const callback = `http://${localAddress()}:${env.PORT ?? 3000}/api/cloud/v1/webhook`;
  startChild(CLOUD_SANDBOX.name, CLOUD_SANDBOX.entry, {
    ...env,
    CLOUD_SANDBOX_PORT: port,
    CLOUD_SANDBOX_CALLBACK_URL: callback,
  });
  env.CLOUD_GRAPH_URL = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 15_000;
  // Any answer means it listens (the Graph API answers an unknown path with its error JSON).
  while ((await fetch(`${env.CLOUD_GRAPH_URL}/`).catch(() => undefined)) === undefined) {
    if (Date.now() > deadline || stopping) {
      say(`the Cloud API simulator did not answer on ${env.CLOUD_GRAPH_URL} within 15 s`);
      say(`is port ${port} taken? set CLOUD_SANDBOX_PORT to a free one`);
      return stopAll(1);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  say(`Cloud API simulator on ${env.CLOUD_GRAPH_URL} — no Meta account is used (docs/cloud-api.md)`);
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
watchParent(stopAll);
if (sandboxMode) await startSandbox();
sayHost();
for (const svc of RUN) startChild(svc.name, svc.entry, { ...env, ...svc.env });
say(`started: ${children.map((c) => c.name).join(', ')}; waiting until each answers /readyz`);
sayDashboard(admin);
await waitUntilReady();
