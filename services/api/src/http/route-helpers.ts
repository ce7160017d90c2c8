import { DEVICE_ID_PATTERN, Joi, emptyQuerySchema } from '@mgw/contracts';
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
 * Whose Idempotency-Keys a request's key is among: its API token's (the public API), and for a
 * workspace token, which acts on many devices, the device's within it (`<tokenHash>:<deviceId>`);
 * an admin request, which has no API token, keeps its keys in a space of the device it acts on
 * (`admin:<deviceId>`). So a key reused for another device, or by another token, never answers
 * with another request's outcome. (A device or pool token keeps its one space, as before
 * workspaces: a retry across an upgrade finds its key.)
 */
export function idempotencyScope(res: Response, deviceId: string): string {
  if (!res.locals.auth) return `admin:${deviceId}`;
  const auth = authOf(res);
  return auth.workspaceToken ? `${auth.tokenHash}:${auth.deviceId}` : auth.tokenHash;
}

/**
 * A change made through the device's holder goes through the Idempotency-Key handling: a retried
 * create makes one group or channel, and the retry gets the first answer back (200, `data` what
 * `run` returned). `deviceOf` names the device a request acts on (the token's by default; the
 * path's for the admin API: the key's space, idempotencyScope). Returns `change(req, res, run)`.
 */
export function idempotentChange(
  idempotency: Idempotency,
  deviceOf: (req: Request, res: Response) => string = (_req, res) => authOf(res).deviceId,
) {
  return (req: Request, res: Response, run: () => Promise<unknown>): Promise<void> =>
    idempotency
      .run(req, idempotencyScope(res, deviceOf(req, res)), async () => ({
        status: 200,
        body: { success: true, data: await run() },
      }))
      .then((outcome) => respond(res, outcome));
}

const deviceIdSchema = Joi.string().pattern(DEVICE_ID_PATTERN).required().messages({
  'string.pattern.base':
    '"deviceId" must be a device id: 1-32 characters of a-z, 0-9, _ or -, starting with a letter or digit',
});

/** The device an admin `/devices/:deviceId/…` route names (400 when it is no device id). */
export function deviceIdOf(req: Request): string {
  return parse(Joi.object({ deviceId: deviceIdSchema }).unknown(true), req.params).deviceId as string;
}
