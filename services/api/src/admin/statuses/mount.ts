import { STATUS_ERRORS, STATUS_LIMITS } from '@mgw/contracts';
import type { RequestHandler } from 'express';
import type { ApiServices } from '../../api-services.js';
import { jsonBody } from '../../http/body.js';
import { FIELD_ALLOWANCE, MAX_JSON_DEPTH } from '../../http/route-table.js';
import { SEND_BODY_LIMIT_BYTES } from '../../features/send/mount.js';
import { statusHandlers } from '../../features/statuses/mount.js';
import { deviceIdOf, type AdminMount } from '../admin-routes.js';

/**
 * A device's status updates for the dashboard (the Statuses tab, docs/broadcasts.md): the public
 * status routes (features/statuses) with the device named by the path, behind the admin guard —
 * the same use cases, bodies, limits and answers. No per-token rate limit (RATE_LIMIT_BROADCASTS
 * is the public tokens'): the admin guard is the gate.
 */
export const statuses: AdminMount = ({ s, guard, none }) => {
  const r = statusHandlers(s, deviceIdOf);
  const base = '/devices/:deviceId/statuses';
  return [
    { method: 'post', path: base, handlers: [guard, statusBody(s), r.post] },
    { method: 'get', path: base, handlers: [guard, r.list] },
    { method: 'get', path: `${base}/settings`, handlers: [guard, r.getSettings] },
    { method: 'put', path: `${base}/settings`, handlers: [guard, settingsBody(s), r.putSettings] },
    { method: 'delete', path: `${base}/:id`, handlers: [guard, none, r.remove] },
  ];
};

/** As the public POST /statuses: an attachment of up to 10 MB beside up to 5,000 viewers. */
const statusBody = (s: ApiServices): RequestHandler =>
  jsonBody({
    limitBytes: SEND_BODY_LIMIT_BYTES,
    tooLargeError: STATUS_ERRORS.bodyTooLarge,
    maxDepth: MAX_JSON_DEPTH,
    maxValues: STATUS_LIMITS.audience + FIELD_ALLOWANCE,
    lists: { audience: STATUS_LIMITS.audience },
    idleTimeoutMs: s.config.http.bodyIdleTimeoutMs,
  });

/** As the public PUT /statuses/settings: one flag. */
const settingsBody = (s: ApiServices): RequestHandler =>
  jsonBody({
    limitBytes: 1024,
    tooLargeError: STATUS_ERRORS.settingsBodyTooLarge,
    maxDepth: MAX_JSON_DEPTH,
    maxValues: FIELD_ALLOWANCE,
    idleTimeoutMs: s.config.http.bodyIdleTimeoutMs,
  });
