import type { RequestHandler } from 'express';
import type { Metrics } from '@mgw/contracts';
import { routeTemplate } from './request-context.js';

/** Counts and times every request by route template, method and status (no ids in labels). */
export function httpMetrics(metrics: Metrics): RequestHandler {
  return (req, res, next) => {
    const end = metrics.httpDuration.startTimer();
    res.once('finish', () => {
      const labels = { route: routeTemplate(req), method: req.method, status: String(res.statusCode) };
      metrics.httpRequests.inc(labels);
      end(labels);
    });
    next();
  };
}
