/**
 * `npm start` on a Redis that answers late: the services it waits for are named, with what their
 * /readyz says, once MGW_READY_TIMEOUT_MS is over; the wait goes on, and `ready:` follows once
 * Redis answers. SIGTERM to the supervisor then stops everything it started.
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, startRedisServer, waitFor } from '@mgw/testing';
import { buildIfStale } from '../support/build.js';
import { processTree, waitUntilGone } from '../support/process-tree.js';
import { READY_LINE } from '../support/npm-start.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

describe('npm start names the services that are not ready in time, and says ready: once they are', function () {
  this.timeout(120_000);

  // The build must be current first (in npm-start.test.ts this ran after the walk-through's start
  // had built), or the supervisor would spend the test's wait for the not-ready line building.
  before(async function () {
    this.timeout(600_000);
    await buildIfStale();
  });

  /**
   * A Redis that answers late: it accepts connections at once but holds them until `open()`,
   * then joins each to a private redis-server (as a Redis still loading its data would, or one
   * behind a slow network). Every service waits for it, none fails yet.
   */
  async function lateRedis() {
    const redis = await startRedisServer();
    const held = new Set<net.Socket>();
    let open = false;
    const join = (client: net.Socket) => {
      const upstream = net.connect(redis.port, '127.0.0.1');
      const drop = () => {
        client.destroy();
        upstream.destroy();
      };
      client.on('error', drop).on('close', drop);
      upstream.on('error', drop).on('close', drop);
      client.pipe(upstream).pipe(client);
    };
    const server = net.createServer((client) => {
      if (open) return join(client);
      client.pause();
      held.add(client);
      client.on('error', () => held.delete(client)).on('close', () => held.delete(client));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    return {
      port: (server.address() as net.AddressInfo).port,
      open() {
        open = true;
        for (const client of held) join(client);
        held.clear();
      },
      async stop() {
        server.close();
        await redis.stop();
      },
    };
  }

  it('When Redis answers only after the ready timeout, then one line names every service not ready and why, npm start keeps running, and prints ready: once Redis answers', async () => {
    const redis = await lateRedis();
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'mgw-start-'));
    const [apiPort, m0, m1, m2, m3] = await Promise.all([
      freePort(),
      freePort(),
      freePort(),
      freePort(),
      freePort(),
    ]);
    const child = spawn(process.execPath, ['scripts/start.mjs'], {
      cwd: ROOT,
      env: {
        ...process.env,
        REDIS_URL: `redis://127.0.0.1:${redis.port}`,
        MGW_DATA_DIR: dataDir,
        PORT: String(apiPort),
        API_METRICS_PORT: String(m0),
        CONNECTION_METRICS_PORT: String(m1),
        SENDER_METRICS_PORT: String(m2),
        NOTIFIER_METRICS_PORT: String(m3),
        // the services give up on Redis after 10 s: name them well before that
        MGW_READY_TIMEOUT_MS: '2000',
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      await waitFor(() => child.exitCode !== null || /not ready after/.test(output), {
        timeoutMs: 60_000,
        intervalMs: 50,
        what: `the not-ready line\n${output}`,
      });
      redis.open();
      const notReady = output.split('\n').filter((l) => l.includes('not ready after'));
      expect(child.exitCode, output).to.equal(null);
      expect(notReady, output).to.have.length(1);
      expect(notReady[0]).to.match(/^\[start\] not ready after 2 s: /);
      for (const name of ['api', 'connection', 'sender', 'notifier']) {
        expect(notReady[0]).to.match(new RegExp(`\\b${name} \\(/readyz: [^)]+\\)`));
      }
      expect(output).not.to.match(READY_LINE);

      await waitFor(() => child.exitCode !== null || READY_LINE.test(output), {
        timeoutMs: 30_000,
        intervalMs: 50,
        what: `ready: after Redis answered\n${output}`,
      });
      expect(output.match(READY_LINE)?.[0]).to.equal(
        `[start] ready: API on http://127.0.0.1:${apiPort} (every service answers /readyz)`,
      );
      expect((await fetch(`http://127.0.0.1:${apiPort}/readyz`)).status).to.equal(200);
      // SIGTERM to the supervisor itself: everything it started stops with it
      const tree = processTree(child.pid!);
      child.kill('SIGTERM');
      await waitUntilGone(tree, [apiPort!, m0!, m1!, m2!, m3!]);
      expect(await exited).to.equal(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      await redis.stop();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
