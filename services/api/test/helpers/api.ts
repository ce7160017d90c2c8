import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { closeRedis, createLogger, createRedis, waitForRedis } from '@mgw/common';
import { createMetrics } from '@mgw/contracts';
import { Encryption, PoolStore, SessionStore } from '@mgw/store';
import { loadApiConfig, type ApiConfig } from '../../src/config.js';
import { createApiServices, type ApiServices } from '../../src/api-services.js';
import { API_BASE, createApp } from '../../src/app.js';
import { createHttpServer } from '../../src/http/server.js';
import { startApiOps } from '../../src/features/ops/mount.js';
import { openApiProblem } from './openapi-check.js';

export interface TestApi {
  url: string;
  /** The ops port (`METRICS_PORT`): /metrics, /healthz, /readyz. */
  metricsUrl: string;
  /** `${url}/api/messenger/v1` */
  api: string;
  services: ApiServices;
  redis: Redis;
  config: ApiConfig;
  /** Every JSON log line the app wrote. */
  logs: Record<string, unknown>[];
  close(): Promise<void>;
}

export type ConfigOverrides = Partial<Omit<ApiConfig, 'rateLimits' | 'http'>> & {
  rateLimits?: Partial<ApiConfig['rateLimits']>;
  http?: Partial<ApiConfig['http']>;
};

/** Boots the real app in-process on 127.0.0.1, port 0, against the test Redis. */
export async function startApi(overrides: ConfigOverrides = {}): Promise<TestApi> {
  const base = loadApiConfig({ ...process.env, NODE_ENV: 'test' });
  const config: ApiConfig = {
    ...base,
    // Many tests fail auth on purpose; the guard has its own test with a low limit.
    authFailureLimit: 1_000_000,
    ...overrides,
    rateLimits: { ...base.rateLimits, ...overrides.rateLimits },
    http: { ...base.http, ...overrides.http },
  };
  const logs: Record<string, unknown>[] = [];
  const stream = new PassThrough();
  stream.on('data', (chunk: Buffer) => {
    for (const line of chunk.toString().split('\n')) if (line.trim()) logs.push(JSON.parse(line));
  });
  const logger = createLogger({ level: 'info', service: 'api-test', stream });
  const redis = createRedis(config.redis.url, 'producer', 'api-test', { enableAutoPipelining: true });
  const bullRedis = createRedis(config.redis.url, 'producer', 'api-test-bull');
  const subscriber = createRedis(config.redis.url, 'subscriber', 'api-test-sub');
  if (overrides.redis === undefined)
    await Promise.all([waitForRedis(redis, 5000), waitForRedis(bullRedis, 5000)]);
  const services = createApiServices({
    config,
    logger,
    redis,
    bullRedis,
    subscriber,
    metrics: createMetrics(),
    encryption: Encryption.fromConfig(config.encryption),
  });
  if (overrides.redis === undefined) await services.start();
  const server = createHttpServer(createApp(services), config.http, logger, services.metrics);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const ops = await startApiOps(services, 0, '127.0.0.1');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    metricsUrl: `http://127.0.0.1:${ops.port}`,
    api: `${url}${API_BASE}`,
    services,
    redis,
    config,
    logs,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await ops.close();
      await services.close();
      await closeRedis(subscriber, bullRedis, redis);
    },
  };
}

/** A fresh device id per test, so queues and sessions never collide. */
export function freshDeviceId(): string {
  return `t-${randomBytes(5).toString('hex')}`;
}

/**
 * A pool token of a pool that exists, made first (written as the admin API writes it): a token
 * whose pool is gone, or never was, is refused 401 (docs/security.md, pool ids reused).
 */
export async function createPoolToken(
  t: TestApi,
  prefix: string,
  devices = [freshDeviceId()],
): Promise<string> {
  const poolId = `${prefix}-${randomBytes(3).toString('hex')}`;
  const made = await new PoolStore(t.redis).create({ id: poolId, name: poolId, devices });
  if (made === 'exists') throw new Error(`pool ${poolId} exists already`);
  const { value } = await t.services.tokens.create({ name: 'pool', poolId });
  return value;
}

export async function createToken(
  t: TestApi,
  opts: { deviceId?: string; expiresInMs?: number; name?: string } = {},
): Promise<string> {
  const { value } = await t.services.tokens.create({ name: opts.name ?? 'test', ...opts });
  return value;
}

export async function markConnected(redis: Redis, deviceId: string): Promise<void> {
  await new SessionStore(redis).update(deviceId, 'connected', {
    phone: '15550001111',
    name: 'Test Account',
    profilePic: 'https://example.test/pic.jpg',
  });
}

export interface JsonResponse {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

/**
 * fetch + JSON body; `token` goes in the Bearer header unless `query` is set. Every answer of the
 * public API is checked against the OpenAPI document: an undocumented status or a body that does
 * not match it fails the test that received it.
 */
export async function call(
  url: string,
  opts: {
    method?: string;
    token?: string;
    tokenInQuery?: boolean;
    json?: unknown;
    body?: string | Buffer;
    headers?: Record<string, string>;
  } = {},
): Promise<JsonResponse> {
  const headers: Record<string, string> = { ...opts.headers };
  let target = url;
  if (opts.token && opts.tokenInQuery) {
    target += (url.includes('?') ? '&' : '?') + `token=${encodeURIComponent(opts.token)}`;
  } else if (opts.token) {
    headers.authorization = `Bearer ${opts.token}`;
  }
  let body: string | Buffer | undefined = opts.body;
  if (opts.json !== undefined) {
    body = JSON.stringify(opts.json);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(target, { method: opts.method ?? (body ? 'POST' : 'GET'), headers, body });
  const text = await res.text();
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(text) as Record<string, unknown>;
  } catch {
    parsed = { raw: text };
  }
  const method = opts.method ?? (body ? 'POST' : 'GET');
  const problem = openApiProblem(target, method, res.status, text === '' ? undefined : parsed, res.headers);
  if (problem) throw new Error(`The answer is not as the OpenAPI document says: ${problem}`);
  return { status: res.status, headers: res.headers, body: parsed };
}
