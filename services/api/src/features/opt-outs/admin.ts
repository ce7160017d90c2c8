import type { RequestHandler } from 'express';
import { Joi } from '@mgw/contracts';
import { SEND_ADDRESS_PATTERN, SEND_ADDRESS_RULE, emptyQuerySchema } from '@mgw/contracts';
import {
  isOptOutCursor,
  listOptOuts,
  optOutSettingsSchema,
  readOptOutSettings,
  type OptOutSettingsChange,
} from '@mgw/store';
import type { Uses } from '../../api-services.js';
import { ApiError } from '../../http/api-error.js';
import { deviceIdOf } from '../../http/route-helpers.js';
import { ADMIN_JSON, type AdminRoute } from '../../http/route-table.js';
import { parse } from '../../http/validation.js';
import { addOptOut, changeOptOutSettings, removeOptOut, type OptOutDeps } from './opt-outs.js';

export type OptOutAdminName =
  'listOptOuts' | 'addOptOut' | 'removeOptOut' | 'getOptOutSettings' | 'putOptOutSettings';

/** A device's suppression list (numbers that opted out) and its keywords and confirmations. */
export const optOutAdminRoutes: AdminRoute<OptOutAdminName>[] = [
  {
    surface: 'admin',
    method: 'get',
    path: '/devices/:deviceId/opt-outs',
    handler: 'listOptOuts',
    console: 'read',
  },
  {
    surface: 'admin',
    method: 'post',
    path: '/devices/:deviceId/opt-outs',
    body: ADMIN_JSON,
    handler: 'addOptOut',
    console: 'admin',
  },
  {
    surface: 'admin',
    method: 'delete',
    path: '/devices/:deviceId/opt-outs/:phone',
    body: 'none',
    handler: 'removeOptOut',
    console: 'admin',
  },
  {
    surface: 'admin',
    method: 'get',
    path: '/devices/:deviceId/opt-out-settings',
    handler: 'getOptOutSettings',
    console: 'read',
  },
  {
    surface: 'admin',
    method: 'put',
    path: '/devices/:deviceId/opt-out-settings',
    body: ADMIN_JSON,
    handler: 'putOptOutSettings',
    console: 'admin',
  },
];

/** The handlers of the rows (an operator's change is counted like a contact's). */
export function optOutAdminHandlers(s: Uses<'redis' | 'metrics'>): Record<OptOutAdminName, RequestHandler> {
  const d: OptOutDeps = { redis: s.redis, metrics: s.metrics };
  return {
    listOptOuts: listOptOutsRoute(d),
    addOptOut: addOptOutRoute(d),
    removeOptOut: removeOptOutRoute(d),
    getOptOutSettings: getOptOutSettingsRoute(d),
    putOptOutSettings: putOptOutSettingsRoute(d),
  };
}

/** A contact as `to` names it: its phone number or its LID (`<digits>@lid`). */
const phoneSchema = Joi.string()
  .pattern(SEND_ADDRESS_PATTERN)
  .required()
  .messages({ 'string.pattern.base': `{{#label}} ${SEND_ADDRESS_RULE}` });
export const listQuerySchema = Joi.object<{ limit: number; cursor?: string }>({
  limit: Joi.number().integer().min(1).max(200).default(50),
  cursor: Joi.string()
    .max(40)
    .custom(
      (v: string, h) => (isOptOutCursor(v) ? v : h.error('any.invalid')),
      'the nextCursor of an earlier page',
    )
    .messages({ 'any.invalid': '{{#label}} must be a nextCursor of an earlier page' }),
});
export const addBodySchema = Joi.object<{ phone: string }>({ phone: phoneSchema });

/** GET /devices/:deviceId/opt-outs?limit=50&cursor=… — the suppression list, newest first. */
function listOptOutsRoute(d: OptOutDeps): RequestHandler {
  return async (req, res) => {
    const deviceId = deviceIdOf(req);
    const query = parse(listQuerySchema, req.query);
    res.status(200).json({ success: true, data: await listOptOuts(d.redis, deviceId, query) });
  };
}

/** POST /devices/:deviceId/opt-outs `{ phone }` — suppresses a contact (opt-outs.ts: addOptOut). */
function addOptOutRoute(d: OptOutDeps): RequestHandler {
  return async (req, res) => {
    const deviceId = deviceIdOf(req);
    parse(emptyQuerySchema, req.query);
    const { phone } = parse(addBodySchema, req.body ?? {});
    res.status(200).json({ success: true, data: await addOptOut(d, deviceId, phone) });
  };
}

/** DELETE /devices/:deviceId/opt-outs/:phone — takes a contact off the list, by either identity (idempotent). */
function removeOptOutRoute(d: OptOutDeps): RequestHandler {
  return async (req, res) => {
    const deviceId = deviceIdOf(req);
    parse(emptyQuerySchema, req.query);
    const { phone } = parse(Joi.object({ phone: phoneSchema }).unknown(true), req.params);
    res.status(200).json({ success: true, data: await removeOptOut(d, deviceId, phone as string) });
  };
}

/** GET /devices/:deviceId/opt-out-settings — the keywords and confirmations in force, and the overrides. */
function getOptOutSettingsRoute(d: OptOutDeps): RequestHandler {
  return async (req, res) => {
    parse(emptyQuerySchema, req.query);
    res.status(200).json({ success: true, data: await readOptOutSettings(d.redis, deviceIdOf(req)) });
  };
}

/** PUT /devices/:deviceId/opt-out-settings — changes some of them (null: back to the default). */
function putOptOutSettingsRoute(d: OptOutDeps): RequestHandler {
  return async (req, res) => {
    parse(emptyQuerySchema, req.query);
    const deviceId = deviceIdOf(req);
    const change = parse(optOutSettingsSchema, req.body ?? {}) as OptOutSettingsChange;
    const changed = await changeOptOutSettings(d, deviceId, change);
    if (changed.kind === 'refused')
      throw ApiError.invalid(
        changed.keywords.map((k) => ({
          path: ['optInKeywords'],
          message: `"${k}" is also an opt-out keyword`,
        })),
      );
    res.status(200).json({ success: true, data: changed.settings });
  };
}
