import type { Request, Response } from 'express';
import { observeTraced } from '@mgw/common';
import type { Metrics } from '@mgw/contracts';
import { routeTemplate } from './request-context.js';

/**
 * Counts and times a finished request by route template, method and status (no ids in labels):
 * called by `requestContext` when the response is done.
 */
export function httpMetrics(metrics: Metrics): (req: Request, res: Response, durationMs: number) => void {
  return (req, res, durationMs) => {
    const labels = { route: routeTemplate(req), method: req.method, status: String(res.statusCode) };
    metrics.httpRequests.inc(labels);
    observeTraced(metrics.httpDuration, labels, durationMs / 1000);
  };
}
