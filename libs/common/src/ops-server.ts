import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type client from 'prom-client';
import {
  METRICS_CONTENT_TYPE,
  OPENMETRICS_CONTENT_TYPE,
  renderMetrics,
  renderOpenMetrics,
  servesOpenMetrics,
} from './metrics.js';

export interface OpsOptions {
  /** The service's own metrics (linted by promtool). */
  registry: client.Registry;
  /** Node's default metrics, served after the service's own. */
  defaults?: client.Registry;
  /**
   * Resolves true when the service can do its work (e.g. Redis reachable). Also run before each
   * scrape, so gauges it refreshes (such as a Redis-up gauge) are current when scraped.
   */
  ready: () => Promise<boolean>;
  /** Refreshes gauges read from elsewhere (e.g. Redis memory) before each scrape; errors are ignored. */
  collect?: () => Promise<void>;
  /** `error` of the 503 /readyz body (`{ success: false, error }`, the error envelope). */
  notReadyError: string;
  /**
   * Why the service is not ready, when it knows more than `notReadyError` says (e.g. a lost
   * subscription): the 503's `details.reason`. Read right after a `ready()` that failed.
   */
  notReadyReason?: () => string | undefined;
}

export type OpsPath = '/healthz' | '/readyz' | '/metrics';
export const OPS_PATHS: readonly OpsPath[] = ['/healthz', '/readyz', '/metrics'];

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
}

/**
 * The one implementation of the operational endpoints, used by every service (by the ops server
 * below, and by the API's express app):
 * - `/healthz`: 200 while the process runs (no dependency checks: a Redis outage must not get
 *   pods restarted);
 * - `/readyz`: 200 when `ready()` holds, else 503 (with `details.reason` when `notReadyReason` has one);
 * - `/metrics`: Prometheus text.
 */
export function createOpsHandler(
  opts: OpsOptions,
): (path: OpsPath, res: ServerResponse, accept?: string) => Promise<void> {
  const notReady = { success: false, error: opts.notReadyError };
  const isReady = () => opts.ready().catch(() => false);
  return async (path, res, accept) => {
    if (path === '/healthz') return sendJson(res, 200, { success: true, status: 'ok' });
    if (path === '/readyz') {
      const ok = await isReady();
      if (ok) return sendJson(res, 200, { success: true, status: 'ready' });
      const reason = opts.notReadyReason?.();
      return sendJson(res, 503, reason ? { ...notReady, details: { reason } } : notReady);
    }
    await Promise.all([isReady(), opts.collect?.().catch(() => undefined)]);
    try {
      // OpenMetrics (with the latency histograms' exemplars) when traces are on and it is asked for.
      const om = servesOpenMetrics(accept);
      const text = await (om ? renderOpenMetrics : renderMetrics)(opts.registry, opts.defaults);
      res.writeHead(200, { 'content-type': om ? OPENMETRICS_CONTENT_TYPE : METRICS_CONTENT_TYPE });
      res.end(text);
    } catch {
      sendJson(res, 500, { success: false, error: 'metrics unavailable' });
    }
  };
}

export interface OpsServer {
  port: number;
  close(): Promise<void>;
}

/** A small HTTP server with only the operational endpoints (for services without an API port). */
export async function startOpsServer(opts: OpsOptions & { port: number; host?: string }): Promise<OpsServer> {
  const handle = createOpsHandler(opts);
  const server = http.createServer((req: IncomingMessage, res) => {
    const path = req.url?.split('?')[0] as OpsPath | undefined;
    if (path && OPS_PATHS.includes(path)) {
      if (req.method === 'GET' || req.method === 'HEAD') return void handle(path, res, req.headers.accept);
      res.setHeader('Allow', 'GET, HEAD');
      return sendJson(res, 405, { success: false, error: 'Method not allowed' });
    }
    sendJson(res, 404, { success: false, error: 'Not found' });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host ?? '0.0.0.0', () => resolve());
  });
  return {
    port: (server.address() as { port: number }).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}
