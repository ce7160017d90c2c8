/**
 * `npm start`'s Redis: the one REDIS_URL names when it answers, a Redis Cluster
 * (REDIS_CLUSTER_NODES) or Sentinel (REDIS_SENTINELS) when set, else a local redis-server started
 * here under the data directory.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { DATA_DIR, env, fail, ROOT, say } from './start-context.mjs';

/** The test kit's redis-server starter (its build), which npm start uses too. */
export const REDIS_SERVER = 'libs/testing/dist/redis-server.js';

/**
 * With REDIS_CLUSTER_NODES the services use that Redis Cluster (REDIS_URL is ignored), with
 * REDIS_SENTINELS the master those sentinels name: nothing is started here, and one no seed or
 * sentinel answers for stops the start, as a missing Redis does.
 */
export async function ensureRedis() {
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
