import type { Request, RequestHandler, Response } from 'express';
import {
  ERRORS,
  connectQuerySchema,
  emptyQuerySchema,
  passkeyAssertionBodySchema,
  passkeyConfirmBodySchema,
} from '@mgw/contracts';
import { ApiError } from '../../http/api-error.js';
import { cloudConnection, type CloudConnection } from '../cloud/index.js';
import { handPasskey, readPasskey, type PasskeyInput, type PasskeyOutcome } from './passkey.js';
import type { Uses } from '../../api-services.js';
import { authOf } from '../../http/auth.js';
import { respond } from '../../http/respond.js';
import { FIELD_ALLOWANCE, feature, type BodySpec } from '../../http/route-table.js';
import { parse } from '../../http/validation.js';
import { connectionOperations, connectionSchemas } from './openapi.js';
import { readStatus } from './read-status.js';

/** A passkey assertion (a few KB as a browser makes it) or a code: small JSON bodies. */
const PASSKEY_BODY: BodySpec = {
  json: { limitBytes: 16 * 1024, tooLargeError: ERRORS.bodyTooLarge, maxValues: FIELD_ALLOWANCE },
};

/** The routes' handlers, each the key of its OpenAPI operation (openapi.ts). */
export type ConnectionName =
  'connect' | 'postConnect' | 'disconnect' | 'status' | 'passkey' | 'passkeyAssertion' | 'passkeyConfirm';

/**
 * Linking the token's device (QR or pairing code), its status, and logging it out: connect and
 * disconnect ask the connection service (clients/connection-service-client.ts), which answers
 * with the status and body; the status is read from the session record.
 */
export const connection = feature<ConnectionName>({
  name: 'connection',
  routes: [
    // express answers HEAD with GET routes; a HEAD must not start a pairing.
    { method: 'get', path: '/connect', limit: 'connect', body: 'none', handler: 'connect', head: 'refuse' },
    // The same handler, under a name of its own: its operation also names a 413.
    { method: 'post', path: '/connect', limit: 'connect', body: 'none', handler: 'postConnect' },
    { method: 'post', path: '/disconnect', limit: 'disconnect', body: 'none', handler: 'disconnect' },
    { method: 'get', path: '/status', limit: 'status', handler: 'status' },
    // A passkey-gated link (docs/passkeys.md): its request, the assertion, the code's confirmation.
    { method: 'get', path: '/connect/passkey', limit: 'status', handler: 'passkey' },
    {
      method: 'post',
      path: '/connect/passkey',
      limit: 'connect',
      body: PASSKEY_BODY,
      handler: 'passkeyAssertion',
    },
    {
      method: 'post',
      path: '/connect/passkey/confirm',
      limit: 'connect',
      body: PASSKEY_BODY,
      handler: 'passkeyConfirm',
    },
  ],
  handlers: (s) => {
    const cloud = cloudConnection(s);
    const connectRoute = connect(s, cloud);
    return {
      connect: connectRoute,
      postConnect: connectRoute,
      disconnect: disconnect(s, cloud),
      status: status(s, cloud),
      ...passkeyHandlers(passkeyRoutes(s)),
    };
  },
  operations: connectionOperations,
  schemas: connectionSchemas,
});

/**
 * GET|POST /connect: a cloud device's credentials are checked again (features/cloud); any other
 * device asks the connection service for a QR code or a pairing code.
 */
function connect(s: Uses<'connection'>, cloud: CloudConnection): RequestHandler {
  return async (req, res) => {
    const { deviceId } = authOf(res);
    const q = parse(connectQuerySchema, req.query);
    if (await cloud.isCloud(deviceId)) {
      res.status(200).json(await cloud.connect(deviceId, q.method));
      return;
    }
    respond(
      res,
      await s.connection.request(
        {
          action: 'connect',
          deviceId,
          method: q.method,
          ...(q.phoneNumber !== undefined ? { phoneNumber: q.phoneNumber } : {}),
          forceNew: q.forceNew,
          rawQrCode: q.rawQrCode,
        },
        req.log,
      ),
    );
  };
}

/** POST /disconnect: a cloud device's configuration is forgotten; the connection service logs any other out. */
function disconnect(s: Uses<'connection'>, cloud: CloudConnection): RequestHandler {
  return async (req, res) => {
    const { deviceId } = authOf(res);
    parse(emptyQuerySchema, req.query);
    if (await cloud.isCloud(deviceId)) {
      res.status(200).json(await cloud.disconnect(deviceId));
      return;
    }
    respond(res, await s.connection.request({ action: 'disconnect', deviceId }, req.log));
  };
}

const passkeyHandlers = (r: ReturnType<typeof passkeyRoutes>) => ({
  passkey: r.get,
  passkeyAssertion: r.assertion,
  passkeyConfirm: r.confirm,
});

/**
 * The passkey routes (docs/passkeys.md): GET /connect/passkey (the pending request, and the code
 * once the phone shows one), POST /connect/passkey (the assertion) and POST
 * /connect/passkey/confirm (the code), 202 once taken; for the token's device (public API) or the
 * path's (admin API).
 */
export function passkeyRoutes(
  s: Parameters<typeof handPasskey>[0] & Parameters<typeof readPasskey>[0],
  deviceOf: (req: Request, res: Response) => string = (_req, res) => authOf(res).deviceId,
): { get: RequestHandler; assertion: RequestHandler; confirm: RequestHandler } {
  const hand =
    (body: (raw: unknown) => PasskeyInput): RequestHandler =>
    async (req, res) => {
      parse(emptyQuerySchema, req.query);
      const input = body(req.body ?? {});
      const outcome = await handPasskey(s, deviceOf(req, res), input);
      if (outcome.kind !== 'taken') throw passkeyError(outcome, 'assertion' in input ? 'assertion' : 'code');
      res.status(202).json({ success: true, ...(outcome.passkey ? { data: outcome.passkey } : {}) });
    };
  return {
    get: async (req, res) => {
      parse(emptyQuerySchema, req.query);
      const view = await readPasskey(s, deviceOf(req, res));
      if (!view) throw new ApiError(404, ERRORS.passkeyNotPending);
      res.status(200).json({ success: true, data: view });
    },
    assertion: hand((body) => parse(passkeyAssertionBodySchema, body)),
    confirm: hand((body) => parse(passkeyConfirmBodySchema, body)),
  };
}

/** Why a passkey step was not taken, as its HTTP error. */
function passkeyError(outcome: Exclude<PasskeyOutcome, { kind: 'taken' }>, field: string): ApiError {
  switch (outcome.kind) {
    case 'none':
      return new ApiError(404, ERRORS.passkeyNotPending);
    case 'wrong_step':
      return new ApiError(409, ERRORS.passkeyWrongStep, undefined, { step: outcome.step });
    case 'invalid':
      return ApiError.invalid([{ path: [field], message: outcome.why }]);
    case 'rejected':
      return new ApiError(422, ERRORS.passkeyRejected);
    case 'unavailable':
      return new ApiError(503, ERRORS.connectionServiceDown);
    case 'timeout':
      return new ApiError(504, ERRORS.connectionTimeout);
    case 'failed':
      return new ApiError(502, ERRORS.connectionFailed);
  }
}

/** GET /status: a cloud device's from its state (features/cloud), any other's from its session. */
function status(s: Parameters<typeof readStatus>[0], cloud: CloudConnection): RequestHandler {
  return async (req, res) => {
    const { deviceId } = authOf(res);
    parse(emptyQuerySchema, req.query);
    res
      .status(200)
      .json(await ((await cloud.isCloud(deviceId)) ? cloud.status(deviceId) : readStatus(s, deviceId)));
  };
}
