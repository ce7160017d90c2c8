import type { Response } from 'express';
import type { Outcome } from '../idempotency.js';

export function respond(res: Response, outcome: Outcome & { replayed?: boolean }): void {
  if (outcome.replayed) res.setHeader('Idempotent-Replayed', 'true');
  res.status(outcome.status).json(outcome.body);
}
