import express, { type Express, type Response } from 'express';
import helmet from 'helmet';
import { errorMiddleware, notFoundHandler } from './http/api-error.js';
import { mountAdminApi } from './admin/admin-api.js';
import { mountDashboard } from './admin/dashboard-static.js';
import type { ApiServices } from './api-services.js';
import { authenticate } from './http/auth.js';
import { httpMetrics } from './http/metrics.js';
import { createRateLimiters } from './http/rate-limits.js';
import { SendRateLimit } from './http/send-rate-limit.js';
import { requestContext } from './http/request-context.js';
import { API_BASE, mountFeatures } from './http/route-table.js';
import { tokenFromSubprotocol } from './features/events/mount.js';
import { FEATURES } from './features/mounts.js';
import { mountDocs } from './openapi/docs-page.js';

export { API_BASE };

/**
 * helmet's default headers, worked out once: helmet() sets the same ones on every response (no
 * option here depends on the request), so they are recorded from a dry run and replayed.
 */
export function securityHeaders(): (res: Response) => void {
  const set: [string, string][] = [];
  const removed: string[] = [];
  const recorder = {
    setHeader: (name: string, value: unknown) => void set.push([name, String(value)]),
    removeHeader: (name: string) => void removed.push(name),
  };
  let done = false;
  helmet()({} as never, recorder as never, (err?: unknown) => {
    if (err) throw err;
    done = true;
  });
  if (!done || set.length === 0) throw new Error('helmet did not finish synchronously');
  return (res) => {
    for (const [name, value] of set) res.setHeader(name, value);
    for (const name of removed) res.removeHeader(name);
  };
}

/**
 * The express app: the public API's capabilities (features/mounts.ts), each route registered with
 * its full path (not a sub-router) so the route template is known to the access log and metrics
 * even when a request fails; then the admin API, the dashboard and the docs page.
 */
export function createApp(s: ApiServices): Express {
  const app = express();
  app.set('trust proxy', s.config.trustProxy);
  app.set('etag', false);
  app.use(requestContext(s.logger, { headers: securityHeaders(), finished: httpMetrics(s.metrics) }));

  // /send's hits are counted by the accept script's calls that write its messages.
  const sendLimit = new SendRateLimit({
    redis: s.redis,
    limit: s.config.rateLimits.send,
    windowMs: s.config.rateLimitWindowMs,
    metrics: s.metrics,
    logger: s.logger,
  });
  const auth = authenticate({ ...s, tokens: s.tokenCache });
  mountFeatures(app, FEATURES, s, {
    auth,
    tokenFromSubprotocol,
    limits: createRateLimiters(s),
    sendLimit,
    config: s.config,
  });
  // Unknown paths under the API need a token too: without one, nothing about the API is revealed.
  app.use(API_BASE, auth, notFoundHandler);

  mountAdminApi(app, s);
  mountDashboard(app, s.config.admin);
  mountDocs(app);

  app.use(notFoundHandler);
  app.use(errorMiddleware(s.logger));
  return app;
}
