import express, { type Express, type RequestHandler } from 'express';
import helmet from 'helmet';
import { OPS_PATHS } from '@mgw/common';
import { errorMiddleware, notFoundHandler } from './api-error.js';
import type { ApiServices } from './api-services.js';
import { authenticate } from './auth.js';
import { httpMetrics } from './http-metrics.js';
import { createRateLimiters } from './rate-limits.js';
import { requestContext } from './request-context.js';
import { connectRoute, disconnectRoute, statusRoute } from './routes/connection.js';
import { messageRoute } from './routes/messages.js';
import { opsRoute } from './routes/ops.js';
import { otpRoute } from './routes/otp.js';
import { sendRoute } from './routes/send.js';
import { requireJsonBody } from './validation.js';

export const API_BASE = '/api/messenger/v1';

/**
 * A 10 MB attachment is ~13.4 MiB of base64; with the JSON around it 15 MB is enough, and
 * anything larger is refused by the parser with 413 before it is buffered.
 */
export const JSON_BODY_LIMIT = '15mb';

/**
 * The express app. Routes are registered with their full path (not a sub-router) so the route
 * template is known to the access log and metrics even when a request fails. Every versioned
 * route runs: authenticate -> its per-token limiter -> JSON body checks -> handler.
 */
export function createApp(s: ApiServices): Express {
  const app = express();
  app.set('trust proxy', s.config.trustProxy);
  app.set('etag', false);
  app.use(helmet());
  app.use(requestContext(s.logger));
  app.use(httpMetrics(s.metrics));

  for (const path of OPS_PATHS) app.get(path, opsRoute(s, path));

  const auth = authenticate(s);
  const limit = createRateLimiters(s);
  const json: RequestHandler[] = [requireJsonBody, express.json({ limit: JSON_BODY_LIMIT })];
  const v1 = (path: string) => `${API_BASE}${path}`;

  // express answers HEAD with GET routes; a HEAD must not start a pairing.
  app.head(v1('/connect'), auth, (_req, res) => void res.set('Allow', 'GET, POST').status(405).end());
  app.get(v1('/connect'), auth, limit.connect, connectRoute(s));
  app.post(v1('/connect'), auth, limit.connect, ...json, connectRoute(s));
  app.post(v1('/disconnect'), auth, limit.disconnect, ...json, disconnectRoute(s));
  app.get(v1('/status'), auth, limit.status, statusRoute(s));
  app.post(v1('/send'), auth, limit.send, ...json, sendRoute(s));
  app.post(v1('/otp'), auth, limit.otp, ...json, otpRoute(s));
  app.get(v1('/messages/:id'), auth, limit.messages, messageRoute(s));
  // Unknown paths under the API need a token too: without one, nothing about the API is revealed.
  app.use(API_BASE, auth, notFoundHandler);

  app.use(notFoundHandler);
  app.use(errorMiddleware(s.logger));
  return app;
}
