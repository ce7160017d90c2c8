import { Redis, type RedisOptions } from 'ioredis';

/**
 * - producer: request-path connections. No offline queue, so a dead Redis fails a request at
 *   once (503) instead of hanging it.
 * - worker: BullMQ workers and blocking consumers; BullMQ requires maxRetriesPerRequest null.
 * - subscriber: pub/sub; retries forever like a worker.
 */
export type RedisRole = 'producer' | 'worker' | 'subscriber';

export function createRedis(url: string, role: RedisRole, name: string, extra: RedisOptions = {}): Redis {
  const common: RedisOptions = {
    connectionName: `mgw-${name}`,
    connectTimeout: 5000,
    retryStrategy: (times) => Math.min(times * 200, 2000),
    lazyConnect: false,
  };
  const byRole: Record<RedisRole, RedisOptions> = {
    producer: { enableOfflineQueue: false, maxRetriesPerRequest: 1 },
    worker: { maxRetriesPerRequest: null },
    subscriber: { maxRetriesPerRequest: null },
  };
  const client = new Redis(url, { ...common, ...byRole[role], ...extra });
  // ioredis emits 'error' on every failed reconnect; without a listener Node would crash.
  client.on('error', () => undefined);
  return client;
}

/** Resolves when the client is ready, or rejects after `timeoutMs` with the last error. */
export async function waitForRedis(client: Redis, timeoutMs = 10_000): Promise<void> {
  if (client.status === 'ready') return;
  await new Promise<void>((resolve, reject) => {
    let lastError: Error | undefined;
    const onError = (err: Error) => (lastError = err);
    const onReady = () => {
      cleanup();
      resolve();
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(
        new Error(`Redis not reachable within ${timeoutMs} ms${lastError ? `: ${lastError.message}` : ''}`),
      );
    }, timeoutMs);
    const cleanup = () => {
      clearTimeout(timer);
      client.off('ready', onReady);
      client.off('error', onError);
    };
    client.on('ready', onReady);
    client.on('error', onError);
  });
}

/** Errors that mean "Redis is not reachable right now" (mapped to 503, not 500). */
export function isRedisUnavailableError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const msg = err.message;
  return (
    msg.includes("Stream isn't writeable") ||
    msg.includes('enableOfflineQueue') ||
    msg.includes('Connection is closed') ||
    msg.includes('ECONNREFUSED') ||
    msg.includes('Reached the max retries per request limit') ||
    err.name === 'MaxRetriesPerRequestError' ||
    (err as NodeJS.ErrnoException).code === 'ECONNREFUSED'
  );
}

/**
 * PING with a deadline: true when Redis answered in time. Worker connections queue commands
 * while Redis is away, so a readiness probe must not wait on them without a bound.
 */
export async function pingRedis(client: Redis, timeoutMs = 1000): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  const answer = client.ping().then(
    (reply) => reply === 'PONG',
    () => false,
  );
  const ok = await Promise.race([answer, deadline]);
  clearTimeout(timer);
  return ok;
}

/** Closes clients without throwing (used on shutdown). */
export async function closeRedis(...clients: (Redis | undefined)[]): Promise<void> {
  await Promise.all(
    clients.map(async (c) => {
      if (!c || c.status === 'end') return;
      try {
        await c.quit();
      } catch {
        c.disconnect();
      }
    }),
  );
}
