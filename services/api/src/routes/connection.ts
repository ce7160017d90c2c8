import type { RequestHandler } from 'express';
import { connectQuerySchema, emptyQuerySchema } from '@mgw/contracts';
import { deviceHealth, sendingView, type SendingView } from '@mgw/store';
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
    // Beyond the spec's fields: why a device is connecting, when its proxy is the cause
    // (`proxy_unreachable`, `proxy_auth`, `proxy_refused`, `proxy_error`; docs/proxies.md).
    if (session.status === 'connecting' && session.lastDisconnectReason?.startsWith('proxy_'))
      body.reason = session.lastDisconnectReason;
    // Beyond the spec's fields, for a linked device (connected or reconnecting): what the account
    // sent today against its caps, its pause while WhatsApp pushes back, and its health score — all
    // in `sending`, the one object beyond the spec, so the spec's fields stay as they are.
    if (session.status !== 'disconnected') {
      const now = Date.now();
      const view: SendingView = await sendingView(s.redis, deviceId, s.config.sendPolicy, now);
      const health = await deviceHealth(s.redis, deviceId, s.config.sendPolicy, now, view);
      body.sending = { ...view, health };
    }
    res.status(200).json(body);
  };
}
