/**
 * `npm start` never leaves a partial gateway, nor a process behind: what cannot start stops the
 * start (exit 1, nothing started); once it runs, however it is stopped — its supervisor killed
 * with SIGKILL, one of its services stopped — every process it started goes, and its ports are
 * free. (SIGINT and SIGTERM to npm's pid: npm-start.test.ts; SIGTERM to the supervisor: npm-start-ready-timeout.test.ts.)
 */
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rename, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, run, startRedisServer, waitFor, type RedisServerHandle } from '@mgw/testing';
import { buildIfStale } from '../support/build.js';
import { processTree, waitUntilGone } from '../support/process-tree.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

describe('npm start refuses to start a partial gateway', function () {
  this.timeout(120_000);

  // These tests hide a build output or break a start: the build itself must be done and current
  // first (this file runs before npm-start.test.ts, whose walk-through builds as a new user's
  // first start does), or the supervisor would spend the test's time building.
  before(async function () {
    this.timeout(600_000);
    await buildIfStale();
  });

  /**
   * Runs the supervisor to its end, with a data directory of its own (removed after: what it
   * makes before it fails, such as the dashboard password, stays out of the checkout);
   * resolves with its exit code and what it printed.
   */
  async function startOnce(env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'mgw-start-'));
    try {
      return await new Promise((resolve) => {
        const child = spawn(process.execPath, ['scripts/start.mjs'], {
          cwd: ROOT,
          env: { ...env, MGW_DATA_DIR: dataDir },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let output = '';
        child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
        child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
        const timer = setTimeout(() => child.kill('SIGKILL'), 100_000);
        child.once('exit', (code) => {
          clearTimeout(timer);
          resolve({ code, output });
        });
      });
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  }

  it('When sandbox mode has no built simulator, then it exits 1, names the missing build and the fix, and starts nothing', async () => {
    const cli = path.join(ROOT, 'libs/messenger-sim/dist/cli.js');
    const hidden = `${cli}.hidden-by-test`;
    // The walk-through above built everything; hide the simulator's entry point for this run only.
    await rename(cli, hidden);
    try {
      const { code, output } = await startOnce({
        ...process.env,
        MESSENGER_SANDBOX: '1',
        REDIS_URL: `redis://127.0.0.1:${await freePort()}`,
        LOG_LEVEL: 'warn',
      });
      expect(code).to.equal(1);
      expect(output).to.include('missing build output: libs/messenger-sim/dist/cli.js');
      expect(output).to.include('npm run build');
      expect(output).to.not.match(/started redis-server|started:|ready:/);
    } finally {
      await rename(hidden, cli);
    }
  });

  it('When REDIS_CLUSTER_NODES names seeds nobody answers at, then it exits 1 naming them and the variable, and starts no redis-server', async () => {
    const seeds = `127.0.0.1:${await freePort()},127.0.0.1:${await freePort()}`;
    const { code, output } = await startOnce({
      ...process.env,
      REDIS_CLUSTER_NODES: seeds,
      LOG_LEVEL: 'warn',
    });
    expect(code).to.equal(1);
    expect(output).to.include(
      `No Redis Cluster node is reachable at ${seeds.replace(',', ', ')} (REDIS_CLUSTER_NODES)`,
    );
    expect(output).to.not.match(/started redis-server|started:|ready:/);
  });

  it('When REDIS_SENTINELS names sentinels nobody answers at, then it exits 1 naming them and the variable, and starts no redis-server', async () => {
    const sentinels = `127.0.0.1:${await freePort()},127.0.0.1:${await freePort()}`;
    const { code, output } = await startOnce({
      ...process.env,
      REDIS_SENTINELS: sentinels,
      LOG_LEVEL: 'warn',
    });
    expect(code).to.equal(1);
    expect(output).to.include(
      `No Redis Sentinel is reachable at ${sentinels.replace(',', ', ')} (REDIS_SENTINELS)`,
    );
    expect(output).to.not.match(/started redis-server|started:|ready:/);
  });

  it('When the simulator cannot start (its port is taken), then it exits 1 instead of talking to WhatsApp', async () => {
    const taken = net.createServer(() => undefined);
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', () => resolve()));
    const port = (taken.address() as net.AddressInfo).port;
    try {
      const { code, output } = await startOnce({
        ...process.env,
        MESSENGER_SANDBOX: '1',
        SANDBOX_PORT: String(port),
        CLOUD_SANDBOX_PORT: String(await freePort()),
        REDIS_URL: `redis://127.0.0.1:${await freePort()}`,
        LOG_LEVEL: 'warn',
      });
      expect(code).to.equal(1);
      expect(output).to.match(/sandbox (exited|simulator did not answer)/);
      expect(output).to.not.match(/started: sandbox|ready:/);
    } finally {
      taken.close();
    }
  });
});
describe('npm start leaves no process behind', function () {
  this.timeout(180_000);
  let dataDir: string;
  let child: ChildProcess | undefined;
  let output = '';
  let exited: Promise<number | null>;
  let redis: RedisServerHandle | undefined;

  afterEach(async () => {
    if (child?.exitCode === null) child.kill('SIGKILL');
    await redis?.stop();
    redis = undefined;
    await rm(dataDir, { recursive: true, force: true });
  });

  let env: NodeJS.ProcessEnv;

  /** Runs scripts/start.mjs with `env` on free ports; resolves with its ports once it says `ready:`. */
  async function startReady(extra: NodeJS.ProcessEnv, args: string[] = []) {
    const [api, sandbox, cloud, m0, m1, m2, m3] = await Promise.all(
      [0, 1, 2, 3, 4, 5, 6].map(() => freePort()),
    );
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'mgw-start-'));
    output = '';
    const { ALLOWED_PRIVATE_HOSTS: _none, MESSENGER_SANDBOX_URL: _off, ...inherited } = process.env;
    child = spawn(process.execPath, ['scripts/start.mjs', ...args], {
      cwd: ROOT,
      env: (env = {
        ...inherited,
        MGW_DATA_DIR: dataDir,
        PORT: String(api),
        SANDBOX_PORT: String(sandbox),
        CLOUD_SANDBOX_PORT: String(cloud),
        API_METRICS_PORT: String(m0),
        CONNECTION_METRICS_PORT: String(m1),
        SENDER_METRICS_PORT: String(m2),
        NOTIFIER_METRICS_PORT: String(m3),
        LOG_LEVEL: 'warn',
        ...extra,
      }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    const proc = child;
    exited = new Promise((resolve) => proc.once('exit', (code) => resolve(code)));
    await waitFor(() => proc.exitCode !== null || /^\[start\] ready: /m.test(output), {
      timeoutMs: 120_000,
      intervalMs: 100,
      what: 'ready:',
    });
    expect(proc.exitCode, output).to.equal(null);
    return { api: api!, sandbox: sandbox!, ops: [m0!, m1!, m2!, m3!] };
  }

  it('When the supervisor is killed with SIGKILL, then its all-in-one process, the simulator and its redis-server stop by themselves and free their ports', async () => {
    const redisPort = await freePort();
    const ports = await startReady({ MESSENGER_SANDBOX: '1', REDIS_URL: `redis://127.0.0.1:${redisPort}` }, [
      '--all-in-one',
    ]);
    const tree = processTree(child!.pid!);
    const commands = tree.map((p) => p.command).join('\n');
    for (const part of ['redis-server', 'libs/messenger-sim/dist/cli.js', 'services/all-in-one/'])
      expect(commands, part).to.include(part);
    child!.kill('SIGKILL');
    await waitUntilGone(tree, [redisPort, ports.api, ports.sandbox, ports.ops[0]!]);
  });

  it('When one service is stopped (SIGTERM to the api), then npm start stops every other one and exits 1; the Redis it used is named with its password masked; out of sandbox mode a webhook to loopback is refused, naming ALLOWED_PRIVATE_HOSTS', async () => {
    redis = await startRedisServer({ args: ['--requirepass', 'pa55-word'] });
    const ports = await startReady({ REDIS_URL: `redis://:pa55-word@127.0.0.1:${redis.port}` });
    expect(output).to.include(`[start] redis: using redis://:***@127.0.0.1:${redis.port} (REDIS_URL)`);
    expect(output).not.to.include('pa55-word');
    const created = await run(
      process.execPath,
      ['services/api/dist/cli/token.js', 'create', '--name', 't'],
      env,
    );
    const refused = await fetch(`http://127.0.0.1:${ports.api}/api/messenger/v1/webhook`, {
      method: 'PUT',
      headers: {
        authorization: `Bearer ${created.trim().split('\n').pop()!}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ url: 'http://127.0.0.1:9/hooks' }),
    });
    const body = (await refused.json()) as { error: string; details: { path: string[]; message: string }[] };
    expect(refused.status, JSON.stringify(body)).to.equal(400);
    expect(body.details[0]!.path).to.deep.equal(['url']);
    expect(body.details[0]!.message).to.include('ALLOWED_PRIVATE_HOSTS');
    const tree = processTree(child!.pid!);
    const api = tree.find((p) => p.command.includes('services/api/dist/main.js'));
    expect(api, tree.map((p) => p.command).join('\n')).to.not.equal(undefined);
    process.kill(api!.pid, 'SIGTERM');
    await waitUntilGone(tree, [ports.api, ...ports.ops]);
    expect(await exited).to.equal(1);
    expect(output).to.match(/\[start\] api exited \(0\); stopping everything/);
  });
});
