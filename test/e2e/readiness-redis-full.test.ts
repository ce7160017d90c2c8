/**
 * A Redis at maxmemory (noeviction) still answers PING but refuses every write: every service's
 * /readyz must say "not ready" then (the probe is a write), and ready again once memory is freed.
 * The services run as real processes against a private Redis with a tiny maxmemory.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { closeRedis, createRedis, waitForRedis } from '@mgw/common';
import {
  fillRedisToMaxmemory,
  freePort,
  startRedisServer,
  waitFor,
  type RedisServerHandle,
} from '@mgw/testing';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SERVICES = ['api', 'connection', 'sender'] as const;

describe('e2e: every service is not ready while Redis refuses writes', function () {
  this.timeout(120_000);
  let redis: RedisServerHandle;
  const children: ChildProcess[] = [];
  const readyz: Record<string, string> = {};

  before(async () => {
    redis = await startRedisServer({ args: ['--maxmemory', '16mb', '--maxmemory-policy', 'noeviction'] });
    for (const name of SERVICES) {
      const metricsPort = await freePort();
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        REDIS_URL: redis.url,
        METRICS_PORT: String(metricsPort),
        NODE_ENV: 'test',
        LOG_LEVEL: 'error',
        ...(name === 'api' ? { PORT: String(await freePort()), HOST: '127.0.0.1' } : {}),
      };
      delete env.MESSENGER_SANDBOX_URL;
      children.push(
        spawn(
          process.execPath,
          ['--conditions=development', '--import', 'tsx', `services/${name}/src/main.ts`],
          {
            cwd: ROOT,
            env,
            stdio: 'ignore',
          },
        ),
      );
      readyz[name] = `http://127.0.0.1:${metricsPort}/readyz`;
    }
  });
  after(async () => {
    await Promise.all(
      children.map(async (child) => {
        if (child.exitCode !== null) return;
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }),
    );
    await redis?.stop();
  });

  const statuses = async () =>
    Object.fromEntries(
      await Promise.all(
        SERVICES.map(async (name) => [
          name,
          (await fetch(readyz[name]!).catch(() => undefined))?.status ?? 0,
        ]),
      ),
    ) as Record<string, number>;
  const all = (status: number) => Object.fromEntries(SERVICES.map((name) => [name, status]));

  it('When Redis fills up, then api, connection and sender answer /readyz 503; when it is freed, 200 again', async () => {
    let last = {};
    await waitFor(async () => JSON.stringify((last = await statuses())) === JSON.stringify(all(200)), {
      timeoutMs: 60_000,
      what: 'every service ready',
    });
    const filler = createRedis(redis.url, 'producer', 'filler');
    try {
      await waitForRedis(filler, 5000);
      await fillRedisToMaxmemory(filler);
      const full = await statuses();
      const ping = await filler.ping();
      await filler.flushdb();
      await filler.config('SET', 'maxmemory', '16mb');
      await waitFor(async () => JSON.stringify((last = await statuses())) === JSON.stringify(all(200)), {
        timeoutMs: 10_000,
        what: `ready again (last ${JSON.stringify(last)})`,
      });
      expect(ping, 'Redis still answers PING while full').to.equal('PONG');
      expect(full).to.deep.equal(all(503));
    } finally {
      await closeRedis(filler);
    }
  });
});
