import type { RequestHandler } from 'express';
import { createOpsHandler, pingRedis, type OpsPath } from '@mgw/common';
import { ERRORS } from '@mgw/contracts';
import type { ApiServices } from '../api-services.js';

/**
 * GET /healthz, /readyz and /metrics: the operational endpoints every service has (one
 * implementation in @mgw/common), answered here from the API's own port.
 */
export function opsRoute(s: ApiServices, path: OpsPath): RequestHandler {
  const handle = createOpsHandler({
    registry: s.metrics.registry,
    defaults: s.defaultMetrics,
    notReadyError: ERRORS.serviceUnavailable,
    ready: async () => {
      const ok = await pingRedis(s.redis, 1000);
      s.metrics.redisUp.set(ok ? 1 : 0);
      return ok;
    },
  });
  return (_req, res) => handle(path, res);
}
