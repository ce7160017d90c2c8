import { emptyQuerySchema } from '@mgw/contracts';
import type { Request, Response } from 'express';
import { respond } from './respond.js';
import { authOf } from './auth.js';
import type { Idempotency } from './idempotency.js';
import { parse } from './validation.js';

/** A route that takes no query: any query parameter is a 400 naming it (none given costs nothing). */
export function noQuery(req: Request): void {
  if (req.url.includes('?')) parse(emptyQuerySchema, req.query);
}

/**
 * A change made through the device's holder goes through the Idempotency-Key handling: a retried
 * create makes one group or channel, and the retry gets the first answer back (200, `data` what
 * `run` returned). Returns the routes' `change(req, res, run)`.
 */
export function idempotentChange(idempotency: Idempotency) {
  return (req: Request, res: Response, run: () => Promise<unknown>): Promise<void> =>
    idempotency
      .run(req, authOf(res).tokenHash, async () => ({
        status: 200,
        body: { success: true, data: await run() },
      }))
      .then((outcome) => respond(res, outcome));
}
