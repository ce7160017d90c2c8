import Joi from 'joi';
import { parseAllowedPrivateHosts, type AllowList } from './outbound/address-policy.js';

/**
 * Config helpers. Each service declares its own schema from shared pieces (these, and the
 * product's pieces in the libs that own them), validates the environment once at start and maps
 * it to a nested, typed config. A bad value fails fast with an error that names the variable.
 */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Environment variables as the schema pieces declare them (validated values, defaults applied). */
export type Env = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** A cross-field rule: returns a problem naming the variables, or undefined. */
export type ConfigRule = (env: Env) => string | undefined;

/**
 * Validates `env` against the union of `pieces`, then runs `rules`; throws ConfigError naming
 * every bad variable. Unknown variables are ignored (the environment holds much else).
 */
export function validateEnv(
  pieces: Joi.PartialSchemaMap[],
  env: NodeJS.ProcessEnv = process.env,
  rules: ConfigRule[] = [],
): Env {
  const schema = Joi.object(Object.assign({}, ...pieces)).unknown(true);
  const { value, error } = schema.validate(env, { abortEarly: false, convert: true });
  if (error) {
    const problems = error.details.map((d) => `${d.path.join('.')}: ${d.message.replace(/"/g, '')}`);
    throw new ConfigError(`Invalid configuration: ${problems.join('; ')}`);
  }
  const broken = rules.map((rule) => rule(value as Env)).filter((p): p is string => p !== undefined);
  if (broken.length > 0) throw new ConfigError(`Invalid configuration: ${broken.join('; ')}`);
  return value as Env;
}

// --- pieces every service uses ----------------------------------------------------------------

export const runtimeEnv: Joi.PartialSchemaMap = {
  NODE_ENV: Joi.string().valid('development', 'production', 'test').default('development'),
  LOG_LEVEL: Joi.string().valid('error', 'warn', 'info', 'debug', 'silent').default('info'),
  SHUTDOWN_TIMEOUT_MS: Joi.number().integer().min(1000).default(25_000),
  // Traces (tracing.ts, docs/monitoring.md "Traces"): checked here so that a bad address stops the
  // start naming it; the SDK reads the rest of its OTEL_ variables itself.
  OTEL_EXPORTER_OTLP_ENDPOINT: Joi.string()
    .uri({ scheme: ['http', 'https'] })
    .allow(''),
  OTEL_RECORD_RECIPIENTS: Joi.boolean().default(false),
  OTEL_TRUST_CALLER_SAMPLING: Joi.boolean().default(false),
};

export interface RuntimeConfig {
  nodeEnv: 'development' | 'production' | 'test';
  logLevel: 'error' | 'warn' | 'info' | 'debug' | 'silent';
  shutdownTimeoutMs: number;
}

export function runtimeConfig(e: Env): RuntimeConfig {
  return { nodeEnv: e.NODE_ENV, logLevel: e.LOG_LEVEL, shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS };
}

/** `host:port,host:port`, as REDIS_CLUSTER_NODES and REDIS_SENTINELS take them. */
const HOST_PORTS = /^\s*[^\s,:]+:\d{1,5}\s*(,\s*[^\s,:]+:\d{1,5}\s*)*$/;

/**
 * Where Redis is: one server (`REDIS_URL`), a Redis Cluster (`REDIS_CLUSTER_NODES`, seeds as
 * `host:port,host:port`; `REDIS_URL` is then ignored), or a master found through Redis Sentinel
 * (`REDIS_SENTINELS`). The cluster's credentials and TLS come from their own variables, since
 * there is no URL to carry them; behind Sentinel the data nodes' credentials, database and TLS
 * (`rediss://`) still come from `REDIS_URL`, whose host and port are then ignored.
 */
/** What `REDIS_COMMAND_TIMEOUT_MS` is unless set (docs/operations.md, "When Redis is silent"). */
export const DEFAULT_REDIS_COMMAND_TIMEOUT_MS = 5000;

export const redisEnv: Joi.PartialSchemaMap = {
  REDIS_URL: Joi.string()
    .uri({ scheme: ['redis', 'rediss'] })
    .default('redis://127.0.0.1:6379'),
  REDIS_CLUSTER_NODES: Joi.string()
    .allow('')
    .pattern(HOST_PORTS)
    .messages({
      'string.pattern.base': 'must be comma-separated host:port seeds (e.g. 10.0.0.1:6379,10.0.0.2:6379)',
    })
    .default(''),
  REDIS_SENTINELS: Joi.string()
    .allow('')
    .pattern(HOST_PORTS)
    .messages({
      'string.pattern.base':
        'must be comma-separated host:port sentinels (e.g. sentinel-0:26379,sentinel-1:26379)',
    })
    .default(''),
  REDIS_SENTINEL_MASTER: Joi.string()
    .pattern(/^\S+$/)
    .messages({ 'string.pattern.base': 'must be the master name the sentinels monitor (no spaces)' })
    .default('mymaster'),
  REDIS_SENTINEL_PASSWORD: Joi.string().allow('').default(''),
  REDIS_CLUSTER_TLS: Joi.boolean().default(false),
  REDIS_CLUSTER_USERNAME: Joi.string().allow('').default(''),
  REDIS_CLUSTER_PASSWORD: Joi.string().allow('').default(''),
  /**
   * How long a request-path command (the API's, a lease's, a readiness probe's) waits for Redis's
   * answer before it fails (503): a silent Redis (a blackholed link, a frozen server) must not
   * hold a request. 0 turns the bound off.
   */
  REDIS_COMMAND_TIMEOUT_MS: Joi.number()
    .integer()
    .min(0)
    .max(600_000)
    .default(DEFAULT_REDIS_COMMAND_TIMEOUT_MS),
};

export interface RedisClusterConfig {
  /** The seeds; ioredis learns every other node (and each slot's master) from them. */
  nodes: { host: string; port: number }[];
  tls: boolean;
  username?: string;
  password?: string;
}

export interface RedisSentinelConfig {
  /** The sentinels asked where the master is (ioredis learns the others from them). */
  sentinels: { host: string; port: number }[];
  /** The master group name the sentinels monitor (`sentinel monitor <name> …`). */
  name: string;
  /** The sentinels' own `requirepass`; the data nodes' credentials come from the URL. */
  password?: string;
}

export interface RedisConfig {
  /** One server; behind Sentinel only its credentials, database and scheme (TLS) count. */
  url: string;
  /** `REDIS_COMMAND_TIMEOUT_MS` of the fail-fast (producer) connections; unset: the default. */
  commandTimeoutMs?: number;
  /** Set when `REDIS_CLUSTER_NODES` is: every connection is then a Cluster client. */
  cluster?: RedisClusterConfig;
  /** Set when `REDIS_SENTINELS` is: every connection then asks the sentinels for the master. */
  sentinel?: RedisSentinelConfig;
}

/** `host:port,host:port` as addresses; a port out of range fails naming the variable. */
function hostPorts(value: unknown, variable: string): { host: string; port: number }[] {
  return String(value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((entry) => {
      const at = entry.lastIndexOf(':');
      const port = Number(entry.slice(at + 1));
      if (!(port >= 1 && port <= 65535))
        throw new ConfigError(`Invalid configuration: ${variable}: ${entry} has no valid port`);
      return { host: entry.slice(0, at), port };
    });
}

export function redisConfig(e: Env): RedisConfig {
  const timeout = e.REDIS_COMMAND_TIMEOUT_MS as number | undefined;
  const commandTimeoutMs = timeout === undefined ? {} : { commandTimeoutMs: timeout };
  const nodes = hostPorts(e.REDIS_CLUSTER_NODES, 'REDIS_CLUSTER_NODES');
  const sentinels = hostPorts(e.REDIS_SENTINELS, 'REDIS_SENTINELS');
  if (nodes.length > 0 && sentinels.length > 0)
    throw new ConfigError(
      'Invalid configuration: REDIS_SENTINELS: set either REDIS_CLUSTER_NODES or REDIS_SENTINELS, not both',
    );
  if (sentinels.length > 0) {
    const password = String(e.REDIS_SENTINEL_PASSWORD ?? '');
    return {
      url: e.REDIS_URL,
      ...commandTimeoutMs,
      sentinel: { sentinels, name: e.REDIS_SENTINEL_MASTER, ...(password ? { password } : {}) },
    };
  }
  if (nodes.length === 0) return { url: e.REDIS_URL, ...commandTimeoutMs };
  return {
    url: e.REDIS_URL,
    ...commandTimeoutMs,
    cluster: {
      nodes,
      tls: e.REDIS_CLUSTER_TLS === true,
      ...(e.REDIS_CLUSTER_USERNAME ? { username: e.REDIS_CLUSTER_USERNAME } : {}),
      ...(e.REDIS_CLUSTER_PASSWORD ? { password: e.REDIS_CLUSTER_PASSWORD } : {}),
    },
  };
}

/**
 * The port of /healthz, /readyz and /metrics (for the API, apart from its public port), and the
 * address every port of the process binds (`HOST`: every interface by default, as containers
 * need; `npm start` sets 127.0.0.1 unless HOST is set).
 */
export const opsEnv: Joi.PartialSchemaMap = {
  METRICS_PORT: Joi.number().port().default(9464),
  HOST: Joi.string().default('0.0.0.0'),
};

export interface OpsConfig {
  port: number;
  host: string;
}

export function opsConfig(e: Env): OpsConfig {
  return { port: e.METRICS_PORT, host: e.HOST };
}

/**
 * Private hosts the outbound client may reach (attachment URLs, webhooks): comma-separated host
 * names, IPs or CIDRs. Empty by default: every private, loopback and link-local address is refused.
 */
export const outboundEnv: Joi.PartialSchemaMap = {
  ALLOWED_PRIVATE_HOSTS: Joi.string()
    .allow('')
    .default('')
    .custom((value: string) => {
      parseAllowedPrivateHosts(value);
      return value;
    })
    .messages({ 'any.custom': '{{#error.message}}' }),
};

export interface OutboundConfig {
  allowList: AllowList;
}

export function outboundConfig(e: Env): OutboundConfig {
  return { allowList: parseAllowedPrivateHosts(e.ALLOWED_PRIVATE_HOSTS) };
}

/**
 * Sandbox mode — a WhatsApp simulator instead of WhatsApp — is on exactly when
 * MESSENGER_SANDBOX_URL is set (`MESSENGER_SANDBOX=1 npm start` sets it); production never sets it.
 */
export const sandboxEnv: Joi.PartialSchemaMap = {
  MESSENGER_SANDBOX_URL: Joi.string()
    .uri({ scheme: ['http', 'https'] })
    .optional(),
};

/** What webhooks may reach in sandbox mode besides ALLOWED_PRIVATE_HOSTS: this machine's loopback. */
export const SANDBOX_WEBHOOK_HOSTS: readonly string[] = ['127.0.0.0/8', '::1', 'localhost'];

/** Logged at start by the services that apply it (api, notifier) when sandbox mode is on. */
export const SANDBOX_WEBHOOK_WARNING =
  'sandbox mode (MESSENGER_SANDBOX_URL is set): webhooks may point at this machine (127.0.0.0/8, ::1, localhost)';

/** The outbound guard of webhooks (the API's check of a URL, the notifier's deliveries). */
export const webhookOutboundEnv: Joi.PartialSchemaMap = { ...outboundEnv, ...sandboxEnv };

export interface WebhookOutboundConfig extends OutboundConfig {
  /** Sandbox mode: loopback is on the allow list (SANDBOX_WEBHOOK_HOSTS); worth a warning at start. */
  sandboxLoopback?: boolean;
}

/**
 * ALLOWED_PRIVATE_HOSTS, plus loopback in sandbox mode: a newcomer trying the gateway against the
 * simulator points a webhook at a receiver on this machine without another variable. Attachment
 * URLs and link previews (the sender's outbound client) get no such exception.
 */
export function webhookOutboundConfig(e: Env): WebhookOutboundConfig {
  const sandboxLoopback = Boolean(e.MESSENGER_SANDBOX_URL);
  const hosts = [e.ALLOWED_PRIVATE_HOSTS as string, ...(sandboxLoopback ? SANDBOX_WEBHOOK_HOSTS : [])];
  return { allowList: parseAllowedPrivateHosts(hosts.filter(Boolean).join(',')), sandboxLoopback };
}

/**
 * Where the Cloud API engine finds Meta's Graph API (docs/cloud-api.md): Meta's by default; the
 * Cloud API simulator's (libs/cloud-sim) in the sandbox and the tests. A Graph URL on a private or
 * loopback host is reached only when that host is allowed (ALLOWED_PRIVATE_HOSTS, or CLOUD_GRAPH_URL's
 * own host in sandbox mode), like every other outbound call.
 */
export const cloudEnv: Joi.PartialSchemaMap = {
  ...outboundEnv,
  ...sandboxEnv,
  CLOUD_GRAPH_URL: Joi.string()
    .uri({ scheme: ['http', 'https'] })
    .default('https://graph.facebook.com'),
  /** A Graph API call's whole budget. */
  CLOUD_GRAPH_TIMEOUT_MS: Joi.number().integer().min(1000).max(120_000).default(20_000),
};

export interface CloudConfig {
  graphUrl: string;
  timeoutMs: number;
  /** ALLOWED_PRIVATE_HOSTS, plus the Graph URL's own host in sandbox mode (the simulator on loopback). */
  allowList: AllowList;
}

export function cloudConfig(e: Env): CloudConfig {
  const graphUrl = e.CLOUD_GRAPH_URL as string;
  const hosts = [e.ALLOWED_PRIVATE_HOSTS as string];
  if (e.MESSENGER_SANDBOX_URL) hosts.push(new URL(graphUrl).hostname.replace(/^\[|\]$/g, ''));
  return {
    graphUrl,
    timeoutMs: e.CLOUD_GRAPH_TIMEOUT_MS as number,
    allowList: parseAllowedPrivateHosts(hosts.filter(Boolean).join(',')),
  };
}
