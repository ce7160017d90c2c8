import type { RequestHandler } from 'express';
import { METRICS_CONTENT_TYPE, pingRedis, renderMetrics } from '@mgw/common';
import { ERRORS } from '@mgw/contracts';
import type { ApiServices } from '../api-services.js';

const PING_TIMEOUT_MS = 1000;

/** GET /healthz: the process is alive (no dependency checks: a Redis outage must not kill pods). */
export const healthRoute: RequestHandler = (_req, res) => {
  res.status(200).json({ success: true, status: 'ok' });
};

/** Redis answers PING within a second; also refreshes mgw_redis_up. */
async function checkRedis(s: ApiServices): Promise<boolean> {
  const ok = await pingRedis(s.redis, PING_TIMEOUT_MS);
  s.metrics.redisUp.set(ok ? 1 : 0);
  return ok;
}

/** GET /readyz: Redis answers PING within a second. */
export function readyRoute(s: ApiServices): RequestHandler {
  return async (_req, res) => {
    const ok = await checkRedis(s);
    res
      .status(ok ? 200 : 503)
      .json(ok ? { success: true, status: 'ready' } : { success: false, error: ERRORS.serviceUnavailable });
  };
}

/** GET /metrics: Prometheus text, our registry then Node's default metrics. */
export function metricsRoute(s: ApiServices): RequestHandler {
  return async (_req, res) => {
    await checkRedis(s);
    res.setHeader('Content-Type', METRICS_CONTENT_TYPE);
    res.status(200).send(await renderMetrics(s.metrics.registry, s.defaultMetrics));
  };
}
