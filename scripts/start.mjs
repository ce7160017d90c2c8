#!/usr/bin/env node
/**
 * `npm start`: builds if needed, makes sure Redis is there, and runs every service as its own
 * process under this small supervisor (the same commands containers run). Ctrl-C (or SIGTERM)
 * stops the services first — they drain and release their devices — then the Redis it started.
 *
 * MESSENGER_SANDBOX=1 also starts the WhatsApp Web simulator and points the services at it.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { canConnect, waitUntil } from './lib/net.mjs';
import { isStale } from './lib/staleness.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const say = (msg) => process.stderr.write(`[start] ${msg}\n`);
const env = { ...process.env };
env.REDIS_URL ??= 'redis://127.0.0.1:6379';

const SERVICES = [
  { name: 'api', entry: 'services/api/dist/main.js', env: {} },
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
];
const SANDBOX = { name: 'sandbox', entry: 'libs/messenger-sim/dist/cli.js', env: {} };

function buildIfNeeded() {
  const pkgs = ['libs', 'services'].flatMap((d) =>
    readdirSync(path.join(ROOT, d)).map((p) => path.join(ROOT, d, p)),
  );
  if (!pkgs.some(isStale)) return;
  say('building (npx lerna run build)…');
  const r = spawnSync('npx', ['lerna', 'run', 'build', '--loglevel', 'warn'], {
    cwd: ROOT,
    stdio: 'inherit',
    env: { ...env, NX_DAEMON: 'false', NX_NO_CLOUD: 'true' },
  });
  if (r.status !== 0) {
    say('build failed');
    process.exit(1);
  }
}

const children = [];
let stopping = false;

function startChild(name, cmd, args, childEnv) {
  const child = spawn(cmd, args, { cwd: ROOT, env: childEnv, stdio: ['ignore', 'inherit', 'inherit'] });
  children.push({ name, child });
  child.once('exit', (code, signal) => {
    if (!stopping) {
      say(`${name} exited (${signal ?? code}); stopping everything`);
      void stopAll(1);
    }
  });
  return child;
}

async function ensureRedis() {
  const url = new URL(env.REDIS_URL);
  const host = url.hostname || '127.0.0.1';
  const port = Number(url.port || 6379);
  if (await canConnect(host, port)) return undefined;
  const local = ['127.0.0.1', 'localhost', '::1'].includes(host);
  const which = spawnSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' });
  if (!local || which.status !== 0) {
    say(`Redis is not reachable at ${url.host}.`);
    say(
      'Start one (e.g. `apt-get install redis-server`, `brew install redis`, or `docker run -p 6379:6379 redis:7`)',
    );
    say('or set REDIS_URL to a running Redis 7 (AOF on, maxmemory-policy noeviction).');
    process.exit(1);
  }
  const dir = path.join(env.MGW_DATA_DIR ?? path.join(ROOT, '.data'), 'redis');
  mkdirSync(dir, { recursive: true });
  say(`starting redis-server on 127.0.0.1:${port} (data in ${path.relative(ROOT, dir) || dir}, AOF on)`);
  const redis = spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--appendonly',
      'yes',
      '--dir',
      dir,
      '--maxmemory-policy',
      'noeviction',
    ],
    { stdio: 'ignore' },
  );
  await waitUntil(() => canConnect('127.0.0.1', port), 10_000, 'redis-server');
  return redis;
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
  if (redisChild && redisChild.exitCode === null) {
    await new Promise((resolve) => {
      redisChild.once('exit', resolve);
      redisChild.kill('SIGTERM');
    });
  }
  process.exit(code);
}

buildIfNeeded();
const redisChild = await ensureRedis();
process.on('SIGINT', () => void stopAll(0));
process.on('SIGTERM', () => void stopAll(0));

if (env.MESSENGER_SANDBOX === '1' && existsSync(path.join(ROOT, SANDBOX.entry))) {
  const port = env.SANDBOX_PORT ?? '3100';
  startChild('sandbox', process.execPath, [SANDBOX.entry], { ...env, SANDBOX_PORT: port });
  env.MESSENGER_SANDBOX_URL = `http://127.0.0.1:${port}`;
  env.SEND_MIN_GAP_MS ??= '0';
  await waitUntil(
    async () => (await fetch(`${env.MESSENGER_SANDBOX_URL}/health`).catch(() => undefined))?.ok === true,
    15_000,
    'the sandbox simulator',
  );
  say(`sandbox simulator on ${env.MESSENGER_SANDBOX_URL} — no real WhatsApp is used`);
}

for (const svc of SERVICES) {
  if (!existsSync(path.join(ROOT, svc.entry))) continue;
  startChild(svc.name, process.execPath, [svc.entry], { ...env, ...svc.env });
}
say(`running: ${children.map((c) => c.name).join(', ')}; API on http://127.0.0.1:${env.PORT ?? 3000}`);
