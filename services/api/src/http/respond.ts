import type { Response } from 'express';
import type { Outcome } from './idempotency.js';

/**
 * Answers with an outcome as JSON: what express's `res.status().json()` sends for these bodies
 * (no ETag is set, so there is no freshness to check), written directly — /send answers
 * thousands of times a second, and express's general path costs a few µs each time.
 */
export function respond(res: Response, outcome: Outcome & { replayed?: boolean }): void {
  if (outcome.replayed) res.setHeader('Idempotent-Replayed', 'true');
  const json = JSON.stringify(outcome.body);
  res.statusCode = outcome.status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(json));
  res.end(json);
}
