import type { RequestHandler } from 'express';
import Joi from 'joi';
import { DEVICE_ID_PATTERN, emptyQuerySchema } from '@mgw/contracts';
import { isExpired, parseDuration, type TokenRecord, type TokenStore } from '@mgw/store';
import { ApiError } from '../http/api-error.js';
import { parse } from '../http/validation.js';
import { ADMIN_ERRORS } from './admin-errors.js';

/** The rules of the token CLI: a name, an optional device id (a slug), an optional `<n>s|m|h|d`. */
export const createTokenSchema = Joi.object<{ name: string; deviceId?: string; expiresIn?: string }>({
  name: Joi.string().trim().min(1).max(100).required(),
  deviceId: Joi.string().pattern(DEVICE_ID_PATTERN).allow('').messages({
    'string.pattern.base':
      '"deviceId" must be a device id: 1-32 characters of a-z, 0-9, _ or -, starting with a letter or digit',
  }),
  expiresIn: Joi.string()
    .allow('')
    .custom((v: string, helpers) =>
      v === '' || parseDuration(v) !== undefined ? v : helpers.error('any.invalid'),
    )
    .messages({ 'any.invalid': '"expiresIn" must be a positive number followed by s, m, h or d, e.g. 30d' }),
});

/** What the admin API shows of a token: never its value or hash. */
export function tokenView(t: TokenRecord, now = new Date()) {
  return {
    id: t.id,
    name: t.name,
    ...(t.deviceId ? { deviceId: t.deviceId } : {}),
    createdAt: t.createdAt,
    ...(t.expiresAt ? { expiresAt: t.expiresAt } : {}),
    expired: isExpired(t, now),
  };
}

/** GET /tokens */
export function listTokensRoute(tokens: TokenStore): RequestHandler {
  return async (req, res) => {
    parse(emptyQuerySchema, req.query);
    const list = await tokens.list();
    const now = new Date();
    res.status(200).json({ success: true, tokens: list.map((t) => tokenView(t, now)) });
  };
}

/** POST /tokens: the value is in this answer and nowhere else, ever (Redis keeps its SHA-256). */
export function createTokenRoute(tokens: TokenStore): RequestHandler {
  return async (req, res) => {
    parse(emptyQuerySchema, req.query);
    const body = parse(createTokenSchema, req.body ?? {});
    const { value, token } = await tokens.create({
      name: body.name,
      ...(body.deviceId ? { deviceId: body.deviceId } : {}),
      ...(body.expiresIn ? { expiresInMs: parseDuration(body.expiresIn) } : {}),
    });
    req.log.info('admin created a token', { tokenId: token.id, deviceId: token.deviceId });
    res.setHeader('Cache-Control', 'no-store');
    res.status(201).json({ success: true, token: tokenView(token), value });
  };
}

/** DELETE /tokens/:id, through TokenStore.revoke (the one path that also ends cached validity). */
export function revokeTokenRoute(tokens: TokenStore): RequestHandler {
  return async (req, res) => {
    parse(emptyQuerySchema, req.query);
    const id = String(req.params.id ?? '');
    if (id.length > 64 || !(await tokens.revoke(id))) throw new ApiError(404, ADMIN_ERRORS.tokenNotFound);
    req.log.info('admin revoked a token', { tokenId: id });
    res.status(200).json({ success: true });
  };
}
