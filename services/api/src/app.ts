import express, { type Express, type Response } from 'express';
import helmet from 'helmet';
import { errorMiddleware, notFoundHandler } from './http/api-error.js';
import { mountDashboard } from './http/dashboard-static.js';
import { AdminAuth } from './http/session/admin-auth.js';
import type { ApiServices } from './api-services.js';
import { authenticate } from './http/auth.js';
import { canonicalPath } from './http/canonical-path.js';
import { devicePath } from './http/device-path.js';
import { httpMetrics } from './http/metrics.js';
import { createRateLimiters } from './http/rate-limits.js';
import { SendRateLimit } from './http/send-rate-limit.js';
import { requestContext } from './http/request-context.js';
import { ADMIN_BASE, API_BASE, routeMounts } from './http/route-table.js';
import { tokenFromSubprotocol } from './features/events/mount.js';
import { FEATURES } from './features/mounts.js';
import { mountDocs } from './openapi/docs-page.js';

export { ADMIN_BASE, API_BASE };

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
 * The express app: the capabilities (features/mounts.ts) on both surfaces, the public API and the
 * admin API, each route registered with its full path (not a sub-router) so the route template is
 * known to the access log and metrics even when a request fails; then the dashboard and the docs page.
 */
export function createApp(s: ApiServices): Express {
  const app = express();
  app.set('trust proxy', s.config.trustProxy);
  app.set('etag', false);
  // Routes match their path exactly: `/Tokens` is not `/tokens` (docs/security.md "One reading of a path").
  app.set('case sensitive routing', true);
  app.use(requestContext(s.logger, { headers: securityHeaders(), finished: httpMetrics(s.metrics) }));

  // /send's hits are counted by the accept script's calls that write its messages.
  const sendLimit = new SendRateLimit({
    redis: s.redis,
    limit: s.config.rateLimits.send,
    windowMs: s.config.rateLimitWindowMs,
    metrics: s.metrics,
    logger: s.logger,
  });
  const auth = authenticate({ ...s, tokens: s.tokenCache, workspaces: s.workspaceCache });
  // The admin API exists only with ADMIN_PASSWORD or ADMIN_API_TOKEN set (404 otherwise).
  const { admin } = s.config;
  const adminAuth =
    admin.password || admin.apiToken
      ? new AdminAuth({ redis: s.redis, config: admin, logger: s.logger, workspaces: s.workspaceCache })
      : undefined;
  const routes = routeMounts(
    FEATURES,
    s,
    { auth, tokenFromSubprotocol, limits: createRateLimiters(s), sendLimit, config: s.config },
    { sendLimit, adminAuth },
  );
  // POST /send and /otp at their exact paths: the first route tried, one layer (route-table.ts).
  routes.hot(app);
  // One spelling of a path under the APIs' bases; any other is a path that does not exist.
  app.use(canonicalPath());
  // A workspace token names its device in the path (/devices/{id}/…): taken off before routing.
  app.use(devicePath());
  routes.all(app);
  mountDashboard(app, s.config.admin);
  mountDocs(app);

  app.use(notFoundHandler);
  app.use(errorMiddleware(s.logger));
  return app;
}
