import type { RequestHandler } from 'express';
import type { ApiConfig } from '../../config.js';
import { feature } from '../../http/route-table.js';
import { buildOpenApi } from '../../openapi/document.js';
import { opsOperations, opsSchemas } from './openapi.js';
import { hostname } from 'node:os';
import {
  createOpsHandler,
  readRedisMemory,
  redisAcceptsWrites,
  startOpsServer,
  type OpsOptions,
  type OpsPath,
  type OpsServer,
} from '@mgw/common';
import { ERRORS, keys } from '@mgw/contracts';
import type { Uses } from '../../api-services.js';

/** What the probes and the metrics read: the registry, and Redis. */
type OpsServices = Uses<'metrics' | 'defaultMetrics' | 'redis'> & Partial<Uses<'usageGauge'>>;

/** GET /api/messenger/v1/openapi.json: the document, built once when first asked. */
function openApiRoute(config: ApiConfig): RequestHandler {
  let body: string | undefined;
  return (_req, res) => {
    body ??= JSON.stringify(buildOpenApi(config));
    res.status(200).type('application/json').send(body);
  };
}

/** The routes' handlers, each the key of its OpenAPI operation (openapi.ts). */
export type OpsName = 'healthz' | 'readyz' | 'document';

/**
 * What needs no token: the probes (from the root, also served on the ops port with /metrics) and
 * the API's own description (it describes, it holds nothing).
 */
export const ops = feature<OpsName>({
  name: 'ops',
  routes: [
    { method: 'get', path: '/healthz', root: true, auth: 'none', limit: 'none', handler: 'healthz' },
    { method: 'get', path: '/readyz', root: true, auth: 'none', limit: 'none', handler: 'readyz' },
    { method: 'get', path: '/openapi.json', auth: 'none', limit: 'none', handler: 'document' },
  ],
  handlers: (s) => ({
    healthz: opsRoute(s, '/healthz'),
    readyz: opsRoute(s, '/readyz'),
    document: openApiRoute(s.config),
  }),
  operations: opsOperations,
  schemas: opsSchemas,
});

const PROBE_KEY = keys.readyProbe(`api:${hostname()}:${process.pid}`);

/**
 * What every ops endpoint of the API shares: ready when Redis answers *and* accepts a write (a
 * Redis at maxmemory answers PING but refuses every write), and, before each scrape, the Redis
 * memory gauges from INFO (the API reads them: it is the one service every deployment has).
 */
export function opsOptions(s: OpsServices): OpsOptions {
  return {
    registry: s.metrics.registry,
    defaults: s.defaultMetrics,
    notReadyError: ERRORS.serviceUnavailable,
    ready: async () => {
      const ok = await redisAcceptsWrites(s.redis, PROBE_KEY, 1000);
      s.metrics.redisUp.set(ok ? 1 : 0);
      return ok;
    },
    collect: async () => {
      await s.usageGauge?.collect();
      const memory = await readRedisMemory(s.redis, 1000);
      if (!memory) return;
      s.metrics.redisMemoryUsed.set(memory.usedBytes);
      s.metrics.redisMemoryMax.set(memory.maxBytes);
    },
  };
}

/**
 * GET /healthz and /readyz on the public port too (probes and load balancers use it);
 * /metrics is served only on the ops port (it names every device).
 */
export function opsRoute(s: OpsServices, path: Exclude<OpsPath, '/metrics'>): RequestHandler {
  const handle = createOpsHandler(opsOptions(s));
  return (_req, res) => handle(path, res);
}

/** /metrics, /healthz and /readyz on `METRICS_PORT`, like the connection and sender services. */
export function startApiOps(s: OpsServices, port: number, host?: string): Promise<OpsServer> {
  return startOpsServer({ ...opsOptions(s), port, host });
}
