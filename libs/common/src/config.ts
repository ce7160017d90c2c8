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
};

export interface RuntimeConfig {
  nodeEnv: 'development' | 'production' | 'test';
  logLevel: 'error' | 'warn' | 'info' | 'debug' | 'silent';
  shutdownTimeoutMs: number;
}

export function runtimeConfig(e: Env): RuntimeConfig {
  return { nodeEnv: e.NODE_ENV, logLevel: e.LOG_LEVEL, shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS };
}

/**
 * Where Redis is: one server (`REDIS_URL`), or a Redis Cluster (`REDIS_CLUSTER_NODES`, seeds as
 * `host:port,host:port`; `REDIS_URL` is then ignored). The cluster's credentials and TLS come from
 * their own variables, since there is no URL to carry them.
 */
export const redisEnv: Joi.PartialSchemaMap = {
  REDIS_URL: Joi.string()
    .uri({ scheme: ['redis', 'rediss'] })
    .default('redis://127.0.0.1:6379'),
  REDIS_CLUSTER_NODES: Joi.string()
    .allow('')
    .pattern(/^\s*[^\s,:]+:\d{1,5}\s*(,\s*[^\s,:]+:\d{1,5}\s*)*$/)
    .messages({
      'string.pattern.base': 'must be comma-separated host:port seeds (e.g. 10.0.0.1:6379,10.0.0.2:6379)',
    })
    .default(''),
  REDIS_CLUSTER_TLS: Joi.boolean().default(false),
  REDIS_CLUSTER_USERNAME: Joi.string().allow('').default(''),
  REDIS_CLUSTER_PASSWORD: Joi.string().allow('').default(''),
};

export interface RedisClusterConfig {
  /** The seeds; ioredis learns every other node (and each slot's master) from them. */
  nodes: { host: string; port: number }[];
  tls: boolean;
  username?: string;
  password?: string;
}

export interface RedisConfig {
  url: string;
  /** Set when `REDIS_CLUSTER_NODES` is: every connection is then a Cluster client. */
  cluster?: RedisClusterConfig;
}

export function redisConfig(e: Env): RedisConfig {
  const seeds = String(e.REDIS_CLUSTER_NODES ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (seeds.length === 0) return { url: e.REDIS_URL };
  const nodes = seeds.map((seed) => {
    const at = seed.lastIndexOf(':');
    const port = Number(seed.slice(at + 1));
    if (!(port >= 1 && port <= 65535))
      throw new ConfigError(`Invalid configuration: REDIS_CLUSTER_NODES: ${seed} has no valid port`);
    return { host: seed.slice(0, at), port };
  });
  return {
    url: e.REDIS_URL,
    cluster: {
      nodes,
      tls: e.REDIS_CLUSTER_TLS === true,
      ...(e.REDIS_CLUSTER_USERNAME ? { username: e.REDIS_CLUSTER_USERNAME } : {}),
      ...(e.REDIS_CLUSTER_PASSWORD ? { password: e.REDIS_CLUSTER_PASSWORD } : {}),
    },
  };
}

/** The port of /healthz, /readyz and /metrics (for the API, apart from its public port). */
export const opsEnv: Joi.PartialSchemaMap = {
  METRICS_PORT: Joi.number().port().default(9464),
};

export interface OpsConfig {
  port: number;
}

export function opsConfig(e: Env): OpsConfig {
  return { port: e.METRICS_PORT };
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
