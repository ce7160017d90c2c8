import { Cluster, Command, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import { DEFAULT_REDIS_COMMAND_TIMEOUT_MS, type RedisConfig, type RedisSentinelConfig } from './config.js';

/**
 * A connection to one Redis server, to the master Redis Sentinel names (`REDIS_SENTINELS`), or to
 * a Redis Cluster (`REDIS_CLUSTER_NODES`).
 */
export type RedisClient = Redis | Cluster;

/**
 * - producer: request-path connections. No offline queue, so a dead Redis fails a request at
 *   once (503) instead of hanging it; and a command unanswered within `REDIS_COMMAND_TIMEOUT_MS`
 *   fails too (`Command timed out`, a 503), so a silent Redis does not hang it either.
 * - worker: BullMQ workers and blocking consumers; BullMQ requires maxRetriesPerRequest null.
 * - subscriber: pub/sub; retries forever like a worker. Subscribed only through `Subscription`
 *   (subscription.ts), which subscribes again after each reconnect and confirms it; ioredis's own
 *   resubscription is off: it misses a subscription made before the ready check, and a refused
 *   one would be an unhandled rejection.
 */
export type RedisRole = 'producer' | 'worker' | 'subscriber';

const retryStrategy = (times: number) => Math.min(times * 200, 2000);
const BY_ROLE: Record<
  RedisRole,
  Pick<RedisOptions, 'enableOfflineQueue' | 'maxRetriesPerRequest' | 'autoResubscribe'>
> = {
  producer: { enableOfflineQueue: false, maxRetriesPerRequest: 1 },
  worker: { maxRetriesPerRequest: null },
  subscriber: { maxRetriesPerRequest: null, autoResubscribe: false },
};

/**
 * The bound on a command's answer: request-path (producer) connections only. Workers and
 * subscribers block on purpose (BullMQ's BZPOPMIN, SUBSCRIBE) and keep their commands for the
 * reconnection; they are bounded where they are waited for.
 */
function commandTimeoutOf(
  target: string | { commandTimeoutMs?: number },
  role: RedisRole,
): Pick<RedisOptions, 'commandTimeout'> {
  if (role !== 'producer') return {};
  const ms = typeof target === 'string' ? undefined : target.commandTimeoutMs;
  const timeout = ms ?? DEFAULT_REDIS_COMMAND_TIMEOUT_MS;
  return timeout > 0 ? { commandTimeout: timeout } : {};
}

/**
 * A connection for `role`: to the server at a URL, or as `target` says — a Cluster client when
 * it names cluster seeds, a Sentinel client when it names sentinels (every service and CLI
 * connects through here, so one variable switches them all).
 */
export function createRedis(url: string, role: RedisRole, name: string, extra?: RedisOptions): Redis;
export function createRedis(
  target: RedisConfig,
  role: RedisRole,
  name: string,
  extra?: RedisOptions,
): RedisClient;
export function createRedis(
  target: string | RedisConfig,
  role: RedisRole,
  name: string,
  extra: RedisOptions = {},
): RedisClient {
  const cluster = typeof target === 'string' ? undefined : target.cluster;
  if (cluster) return createCluster(cluster, role, name, { ...commandTimeoutOf(target, role), ...extra });
  const url = typeof target === 'string' ? target : target.url;
  const sentinel = typeof target === 'string' ? undefined : target.sentinel;
  const client = new Redis(url, {
    connectionName: `mgw-${name}`,
    connectTimeout: 5000,
    retryStrategy,
    lazyConnect: false,
    ...(sentinel ? sentinelOptions(sentinel, url) : {}),
    ...BY_ROLE[role],
    ...commandTimeoutOf(target, role),
    ...extra,
  });
  // ioredis emits 'error' on every failed reconnect; without a listener Node would crash.
  client.on('error', () => undefined);
  if (role === 'producer' && client.options.commandTimeout) failFastWhileSilent(client);
  return sentinel ? followFailovers(client) : client;
}

/** The error of a command not sent because the connection is silent (see failFastWhileSilent). */
export const REDIS_SILENT =
  'Redis is silent: the command was not sent (an earlier one got no answer in time)';
/** How often a silent connection is asked whether Redis answers again. */
const SILENT_PROBE_MS = 500;

/**
 * A request-path connection whose command timed out is silent (a blackholed link, a frozen
 * server): until Redis answers again, every new command fails at once (`REDIS_SILENT`, a 503)
 * instead of waiting out its own timeout — a request makes several commands, and each would add
 * the whole timeout. Meanwhile one PING at a time asks whether Redis answers again; its answer,
 * or a new connection, ends the silence. Nothing is sent while silent, so nothing of it can land
 * later.
 */
function failFastWhileSilent(client: Redis): void {
  let silent = false;
  let probing = false;
  const send = client.sendCommand.bind(client);
  const heard = () => void (silent = false);
  const onFailure = (err: unknown) => {
    if (silent || (err as Error)?.message !== 'Command timed out') return;
    silent = true;
    probe();
  };
  const probe = () => {
    if (!silent || probing || client.status !== 'ready') return;
    probing = true;
    const ping = new Command('ping', []);
    void send(ping);
    ping.promise
      .then(heard, () => undefined)
      .finally(() => {
        probing = false;
        if (silent) setTimeout(probe, SILENT_PROBE_MS).unref();
      });
  };
  client.sendCommand = ((command: Command, stream?: unknown) => {
    // Only a ready connection is judged silent: a reconnection's own handshake (CLIENT SETNAME,
    // the ready check) must go through, or the connection could never be ready again.
    if (silent && client.status === 'ready') {
      command.reject(new Error(REDIS_SILENT));
      return command.promise;
    }
    const sent = send(command, stream as never);
    command.promise.catch(onFailure);
    return sent;
  }) as typeof client.sendCommand;
  // A new connection (or none) is not the silent one.
  client.on('ready', heard);
  client.on('close', heard);
}

/**
 * The two ioredis workarounds below, on a Sentinel client and on every duplicate of it (BullMQ
 * duplicates the connection it is given for its blocking reads; so do the device commands).
 */
function followFailovers(client: Redis): Redis {
  client.on('ready', () => quietFailoverDetector(client));
  client.on('close', () => retireFailoverDetector(client));
  const duplicate = client.duplicate.bind(client);
  client.duplicate = (override?: Partial<RedisOptions>) => {
    const copy = followFailovers(duplicate(override));
    copy.on('error', () => undefined);
    return copy;
  };
  return client;
}

interface FailoverDetector {
  sentinels: { client: Redis }[];
  cleanup(): void;
}
const connectorOf = (client: Redis) =>
  (client as unknown as { connector?: { failoverDetector?: FailoverDetector | null } }).connector;

/**
 * ioredis (5.11) gives the detector's sentinel connections no 'error' listener: while a sentinel
 * is away each failed reconnect would print "[ioredis] Unhandled error event" to stderr, outside
 * the JSON log. The detector exists by 'ready' (it is made when the socket connects).
 */
function quietFailoverDetector(client: Redis): void {
  for (const s of connectorOf(client)?.failoverDetector?.sentinels ?? []) {
    if (s.client.listenerCount('error') === 0) s.client.on('error', () => undefined);
  }
}

/**
 * Stops the failover detector of a connection that just closed. ioredis (5.11) keeps the old
 * detector subscribed while it reconnects; when the sentinels' `+switch-master` reaches it then
 * — the usual order after a master dies: the client loses it first, the sentinels promote a
 * replica a second later — while the client is asking a sentinel, it aborts the reconnect midway
 * and the client ends for good ("Connection is closed." on every command; a slow sentinel makes it
 * certain, see libs/common/test/redis-sentinel.test.ts). Each successful connect starts a fresh
 * detector, so nothing is missed.
 */
function retireFailoverDetector(client: Redis): void {
  const connector = connectorOf(client);
  connector?.failoverDetector?.cleanup();
  if (connector) connector.failoverDetector = null;
}

/**
 * What makes a client a Sentinel client: it asks the sentinels for the master of `name` on every
 * (re)connect and checks the server it reaches says `master`. Two ways it leaves a master that
 * is one no more: `failoverDetector` subscribes to the sentinels' `+switch-master` and drops the
 * connection the moment they promote another; and a write answered `READONLY` (the old master,
 * demoted, still holds the connection, or the notice was missed) reconnects and sends the command
 * again — a refused write did nothing, so sending it again is safe. The URL (`REDIS_URL`) still
 * gives the data nodes' username, password and database; `rediss://` turns TLS on for the data
 * nodes and the sentinels alike.
 */
/**
 * Replies of a master demoted under the client: a write refused, or a blocking read (BullMQ's
 * BZPOPMIN) released because the server turned replica.
 */
const DEMOTED = ['READONLY', 'instance state changed'];

export function sentinelOptions(sentinel: RedisSentinelConfig, url: string): RedisOptions {
  const tls = new URL(url).protocol === 'rediss:';
  return {
    sentinels: sentinel.sentinels,
    name: sentinel.name,
    role: 'master',
    ...(sentinel.password ? { sentinelPassword: sentinel.password } : {}),
    ...(tls ? { enableTLSForSentinelMode: true, sentinelTLS: {} } : {}),
    failoverDetector: true,
    // A sentinel that accepts the connection but never answers (a frozen pod, a black-holed
    // network) would otherwise hold every reconnect forever: ask the next one after a second.
    sentinelCommandTimeout: 1000,
    sentinelRetryStrategy: retryStrategy,
    sentinelReconnectStrategy: retryStrategy,
    reconnectOnError: (err) => (DEMOTED.some((m) => err.message.includes(m)) ? 2 : false),
  };
}

/**
 * An ioredis Cluster client. Reads and writes go to each slot's master (replicas lag behind:
 * asynchronous replication). `dnsLookup` keeps host names as given, which TLS on managed clusters
 * (ElastiCache, Memorystore) needs to match their certificates.
 */
function createCluster(
  cluster: NonNullable<RedisConfig['cluster']>,
  role: RedisRole,
  name: string,
  extra: RedisOptions,
): Cluster {
  const { enableAutoPipelining, enableOfflineQueue, ...perNode } = { ...BY_ROLE[role], ...extra };
  const options: ClusterOptions = {
    scaleReads: 'master',
    clusterRetryStrategy: retryStrategy,
    enableOfflineQueue: enableOfflineQueue ?? true,
    ...(enableAutoPipelining ? { enableAutoPipelining } : {}),
    slotsRefreshTimeout: 2000,
    dnsLookup: (address, callback) => callback(null, address),
    redisOptions: {
      connectionName: `mgw-${name}`,
      connectTimeout: 5000,
      ...(cluster.username ? { username: cluster.username } : {}),
      ...(cluster.password ? { password: cluster.password } : {}),
      ...(cluster.tls ? { tls: {} } : {}),
      ...perNode,
    },
  };
  const client = new Cluster(cluster.nodes, options);
  client.on('error', () => undefined);
  client.on('node error', () => undefined);
  return client;
}

/** The servers a keyspace-wide command (SCAN, INFO) must visit: the one server, or every master. */
export function masterNodes(client: RedisClient): Redis[] {
  return client instanceof Cluster ? client.nodes('master') : [client];
}

/** Whether the client talks to a Redis Cluster. */
export function isClusterClient(client: RedisClient): client is Cluster {
  return client instanceof Cluster;
}

/** Resolves when the client is ready, or rejects after `timeoutMs` with the last error. */
export async function waitForRedis(client: RedisClient, timeoutMs = 10_000): Promise<void> {
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

/**
 * Messages of Redis errors that mean "storage cannot serve this now": unreachable, full
 * (`maxmemory` with noeviction refuses writes), a cluster without a working majority or
 * mid-failover, a replica that took writes' place, or a dataset still loading.
 */
const UNAVAILABLE_MESSAGES = [
  "Stream isn't writeable",
  'enableOfflineQueue',
  'Connection is closed',
  'ECONNREFUSED',
  'Reached the max retries per request limit',
  'OOM command not allowed',
  // Redis set to persist refuses writes while it cannot (a full disk, an unwritable directory).
  'MISCONF',
  'CLUSTERDOWN',
  'Too many Cluster redirections',
  "Cluster isn't ready",
  // ioredis groups auto-pipelined commands by node; when a failover moves slots before the group
  // is sent, the group no longer maps to one node and ioredis refuses it (a Cluster test's 500).
  'All keys in the pipeline should belong to the same slots allocation group',
  'MASTERDOWN',
  'READONLY',
  'LOADING',
  // Behind Sentinel: no sentinel answered where the master is.
  'All sentinels are unreachable',
  // A request-path command unanswered within REDIS_COMMAND_TIMEOUT_MS (a silent Redis), and the
  // ones not sent while it stays silent.
  'Command timed out',
  'Redis is silent',
];

/**
 * Errors that mean "Redis cannot serve this right now" (mapped to 503, never 500). Also looks
 * through wrappers: an aborted MULTI (`EXECABORT`) carries the refusals in `previousErrors`, and
 * other libraries wrap the Redis error in `cause` or an AggregateError.
 */
export function isRedisUnavailableError(err: unknown, depth = 0): boolean {
  if (!(err instanceof Error) || depth > 4) return false;
  const e = err as Error & { code?: unknown; previousErrors?: unknown; errors?: unknown };
  if (
    UNAVAILABLE_MESSAGES.some((m) => e.message.includes(m)) ||
    e.name === 'MaxRetriesPerRequestError' ||
    e.code === 'ECONNREFUSED'
  ) {
    return true;
  }
  const inner = [
    e.cause,
    ...(Array.isArray(e.previousErrors) ? e.previousErrors : []),
    ...(Array.isArray(e.errors) ? e.errors : []),
  ];
  return inner.some((i) => isRedisUnavailableError(i, depth + 1));
}

/** Resolves with the promise's value, or with `fallback` after `timeoutMs` (or when it rejects). */
async function within<T>(p: Promise<T>, timeoutMs: number, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<T>((resolve) => {
    timer = setTimeout(() => resolve(fallback), timeoutMs);
  });
  try {
    return await Promise.race([p.catch(() => fallback), deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * PING with a deadline: true when Redis answered in time. Worker connections queue commands
 * while Redis is away, so a readiness probe must not wait on them without a bound.
 */
export async function pingRedis(client: RedisClient, timeoutMs = 1000): Promise<boolean> {
  return within(
    client.ping().then((reply) => reply === 'PONG'),
    timeoutMs,
    false,
  );
}

/**
 * The readiness check of every service: Redis answers *and accepts writes*. A Redis at
 * `maxmemory` (noeviction) still answers PING but refuses every write, so only a write shows that
 * the process can do its work. The probe key is tiny and expires by itself.
 */
export async function redisAcceptsWrites(
  client: RedisClient,
  probeKey: string,
  timeoutMs = 1000,
): Promise<boolean> {
  return within(
    client.set(probeKey, String(Date.now()), 'PX', 10_000).then((reply) => reply === 'OK'),
    timeoutMs,
    false,
  );
}

export interface RedisMemory {
  usedBytes: number;
  /** `maxmemory`; 0 means no limit is set. */
  maxBytes: number;
}

/**
 * `used_memory` and `maxmemory` from INFO memory, or undefined when Redis did not answer in time.
 * On a Cluster: the master nearest its limit (the first to refuse writes).
 */
export async function readRedisMemory(
  client: RedisClient,
  timeoutMs = 1000,
): Promise<RedisMemory | undefined> {
  const all = await Promise.all(masterNodes(client).map((node) => readNodeMemory(node, timeoutMs)));
  if (all.length === 0 || all.some((m) => m === undefined)) return undefined;
  const fill = (m: RedisMemory) => (m.maxBytes > 0 ? m.usedBytes / m.maxBytes : 0);
  return (all as RedisMemory[]).reduce((a, b) => (fill(b) > fill(a) ? b : a));
}

async function readNodeMemory(client: Redis, timeoutMs: number): Promise<RedisMemory | undefined> {
  const info = await within<string | undefined>(client.info('memory'), timeoutMs, undefined);
  if (info === undefined) return undefined;
  const field = (name: string) => Number(new RegExp(`^${name}:(\\d+)`, 'm').exec(info)?.[1] ?? NaN);
  const usedBytes = field('used_memory');
  const maxBytes = field('maxmemory');
  return Number.isFinite(usedBytes) && Number.isFinite(maxBytes) ? { usedBytes, maxBytes } : undefined;
}

/** Closes clients without throwing (used on shutdown). */
export async function closeRedis(...clients: (RedisClient | undefined)[]): Promise<void> {
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
