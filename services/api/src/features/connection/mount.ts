import type { RequestHandler } from 'express';
import { connectQuerySchema, emptyQuerySchema } from '@mgw/contracts';
import type { ApiServices } from '../../api-services.js';
import { authOf } from '../../http/auth.js';
import { respond } from '../../http/respond.js';
import { feature } from '../../http/route-table.js';
import { parse } from '../../http/validation.js';
import { connectionPaths } from './openapi.js';
import { readStatus } from './read-status.js';

/**
 * Linking the token's device (QR or pairing code), its status, and logging it out: connect and
 * disconnect ask the connection service (clients/connection-service-client.ts), which answers
 * with the status and body; the status is read from the session record.
 */
export const connection = feature({
  name: 'connection',
  routes: [
    // express answers HEAD with GET routes; a HEAD must not start a pairing.
    { method: 'get', path: '/connect', limit: 'connect', body: 'none', handler: 'connect', head: 'refuse' },
    { method: 'post', path: '/connect', limit: 'connect', body: 'none', handler: 'connect' },
    { method: 'post', path: '/disconnect', limit: 'disconnect', body: 'none', handler: 'disconnect' },
    { method: 'get', path: '/status', limit: 'status', handler: 'status' },
  ],
  handlers: (s) => ({ connect: connect(s), disconnect: disconnect(s), status: status(s) }),
  paths: connectionPaths,
});

/** GET|POST /connect: asks the connection service for a QR code or a pairing code. */
function connect(s: ApiServices): RequestHandler {
  return async (req, res) => {
    const { deviceId } = authOf(res);
    const q = parse(connectQuerySchema, req.query);
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

/** POST /disconnect: the connection service logs the account out. */
function disconnect(s: ApiServices): RequestHandler {
  return async (req, res) => {
    const { deviceId } = authOf(res);
    parse(emptyQuerySchema, req.query);
    respond(res, await s.connection.request({ action: 'disconnect', deviceId }, req.log));
  };
}

/** GET /status */
function status(s: ApiServices): RequestHandler {
  return async (req, res) => {
    const { deviceId } = authOf(res);
    parse(emptyQuerySchema, req.query);
    res.status(200).json(await readStatus(s, deviceId));
  };
}
