import type { Request, RequestHandler, Response } from 'express';
import {
  Joi,
  STATUS_ERRORS,
  STATUS_ID_PATTERN,
  statusBodySchema,
  statusSettingsSchema,
  type StatusBody,
} from '@mgw/contracts';
import { readStatusSettings, writeStatusSettings } from '@mgw/store';
import type { Uses } from '../../api-services.js';
import { postStatus } from './post-status.js';
import { isRefusal } from '../../enqueue/refusal.js';
import { ApiError } from '../../http/api-error.js';
import { authOf } from '../../http/auth.js';
import { refusalError } from '../../http/refusal-error.js';
import { respond } from '../../http/respond.js';
import { deviceIdOf, idempotencyScope, noQuery } from '../../http/route-helpers.js';
import { feature } from '../../http/route-table.js';
import { parse } from '../../http/validation.js';
import { statusAdminHandlers, statusAdminRoutes, type StatusAdminName } from './admin.js';
import { deleteStatus, type StatusDeleteOutcome } from './delete-status.js';
import { listStatuses } from './list-statuses.js';
import { broadcastSchemas, statusOperations } from './openapi.js';
import { statusBody, settingsBody } from './bodies.js';

/** The public routes' handlers (their OpenAPI operations are keyed by these names). */
export type StatusName = 'post' | 'list' | 'getSettings' | 'putSettings' | 'remove';

/**
 * Status updates (stories, docs/broadcasts.md): posted through the send path, listed with their
 * viewers. The dashboard has the same routes for any device, named by the path (admin.ts).
 */
export const statuses = feature<StatusName, StatusAdminName>({
  name: 'statuses',
  routes: [
    { method: 'post', path: '/statuses', limit: 'broadcasts', body: statusBody, handler: 'post' },
    { method: 'get', path: '/statuses', limit: 'broadcasts', handler: 'list' },
    { method: 'get', path: '/statuses/settings', limit: 'broadcasts', handler: 'getSettings' },
    {
      method: 'put',
      path: '/statuses/settings',
      limit: 'broadcasts',
      body: settingsBody,
      handler: 'putSettings',
    },
    { method: 'delete', path: '/statuses/:id', limit: 'broadcasts', body: 'none', handler: 'remove' },
    ...statusAdminRoutes,
  ],
  handlers: (s) => ({ ...statusHandlers(s), ...statusAdminHandlers(statusHandlers(s, deviceIdOf)) }),
  operations: statusOperations,
  schemas: broadcastSchemas,
});

const idParams = Joi.object({
  id: Joi.string()
    .pattern(STATUS_ID_PATTERN)
    .required()
    .messages({ 'string.pattern.base': '"id" must be a status id (the messageId POST /statuses answered)' }),
});

/** Why a status could not be deleted, in HTTP. */
function deleteError(outcome: Exclude<StatusDeleteOutcome, { ok: true }>): ApiError {
  switch (outcome.reason) {
    case 'not_found':
      return new ApiError(404, STATUS_ERRORS.notFound);
    case 'not_deletable':
      return new ApiError(409, STATUS_ERRORS.notDeletable);
    case 'expired':
      return new ApiError(409, STATUS_ERRORS.expired);
    case 'refused':
      return refusalError(outcome.refusal);
  }
}

/**
 * The status handlers: post a status (through the send queue, post-status.ts), the
 * device's current statuses with who viewed each, delete one, and whether contacts' statuses
 * become events. The admin routes serve them too (admin.ts), with the device named by the path.
 */
export function statusHandlers(
  s: Uses<'idempotency' | 'acceptor' | 'redis' | 'statuses' | 'messages'>,
  /** The device a request acts on: the token's (public API), or the path's (admin API). */
  deviceOf: (req: Request, res: Response) => string = (_req, res) => authOf(res).deviceId,
) {
  return {
    post: async (req, res) => {
      noQuery(req);
      const deviceId = deviceOf(req, res);
      const body = parse(statusBodySchema, req.body ?? {}) as StatusBody;
      const outcome = await s.idempotency.run(req, idempotencyScope(res, deviceId), async () => {
        const accepted = await postStatus(s, deviceId, body);
        if (isRefusal(accepted)) throw refusalError(accepted);
        const { kind: _kind, ...data } = accepted;
        return { status: 202, body: { success: true, data } };
      });
      respond(res, outcome);
    },
    list: async (req, res) => {
      noQuery(req);
      const statuses = await listStatuses(s, deviceOf(req, res));
      res.status(200).json({ success: true, data: { statuses } });
    },
    /** 200 when a status left the queue before it was sent; 202 when its revoke is queued. */
    remove: async (req, res) => {
      noQuery(req);
      const deviceId = deviceOf(req, res);
      const { id } = parse(idParams, { id: req.params.id });
      const outcome = await deleteStatus(s, deviceId, id);
      if (!outcome.ok) throw deleteError(outcome);
      res.status(outcome.data.status === 'deleted' ? 200 : 202).json({ success: true, data: outcome.data });
    },
    getSettings: async (req, res) => {
      noQuery(req);
      res.status(200).json({ success: true, data: await readStatusSettings(s.redis, deviceOf(req, res)) });
    },
    putSettings: async (req, res) => {
      noQuery(req);
      const deviceId = deviceOf(req, res);
      const body = parse(statusSettingsSchema, req.body ?? {}) as { receiveStatuses: boolean };
      await writeStatusSettings(s.redis, deviceId, body);
      res.status(200).json({ success: true, data: body });
    },
  } satisfies Record<StatusName, RequestHandler>;
}

/** The handlers of the status routes, by name (the admin routes serve them too: admin.ts). */
export type StatusHandlers = ReturnType<typeof statusHandlers>;
