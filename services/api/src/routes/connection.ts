import type { RequestHandler } from 'express';
import { connectQuerySchema, emptyQuerySchema } from '@mgw/contracts';
import { sendingView } from '@mgw/store';
import type { ApiServices } from '../api-services.js';
import { authOf } from '../http/auth.js';
import { parse } from '../http/validation.js';
import { respond } from './respond.js';

/** GET|POST /connect: asks the connection service for a QR code or a pairing code. */
export function connectRoute(s: ApiServices): RequestHandler {
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
export function disconnectRoute(s: ApiServices): RequestHandler {
  return async (req, res) => {
    const { deviceId } = authOf(res);
    parse(emptyQuerySchema, req.query);
    respond(res, await s.connection.request({ action: 'disconnect', deviceId }, req.log));
  };
}

/** GET /status: the session record; account details only while connected; the sending policy's usage. */
export function statusRoute(s: ApiServices): RequestHandler {
  return async (req, res) => {
    const { deviceId } = authOf(res);
    parse(emptyQuerySchema, req.query);
    const session = await s.sessions.get(deviceId);
    const body: Record<string, unknown> = { success: true, status: session.status };
    if (session.status === 'connected') {
      for (const field of ['phone', 'name', 'profilePic'] as const) {
        if (session[field]) body[field] = session[field];
      }
    }
    // Beyond the spec's fields, for a linked device (connected or reconnecting): what the account
    // sent today against its caps, and its pause while WhatsApp pushes back.
    if (session.status !== 'disconnected')
      body.sending = await sendingView(s.redis, deviceId, s.config.sendPolicy);
    res.status(200).json(body);
  };
}
