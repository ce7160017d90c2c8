import type { Request, RequestHandler } from 'express';
import { Joi } from '@mgw/contracts';
import { DEVICE_ID_PATTERN, emptyQuerySchema } from '@mgw/contracts';
import { policyOverrideSchema, type PolicyOverride } from '@mgw/store';
import type { Uses } from '../../api-services.js';
import { ADMIN_JSON, type AdminRoute } from '../../http/route-table.js';
import { parse } from '../../http/validation.js';
import { changePolicy, devicePolicy, endRestriction, type PolicyDeps } from './policy.js';

export type PolicyAdminName = 'getPolicy' | 'putPolicy' | 'clearRestriction';

/** A device's sending policy (its overrides, what is in force) and the end of its pause. */
export const policyAdminRoutes: AdminRoute<PolicyAdminName>[] = [
  {
    surface: 'admin',
    method: 'get',
    path: '/devices/:deviceId/policy',
    handler: 'getPolicy',
    console: 'read',
  },
  {
    surface: 'admin',
    method: 'put',
    path: '/devices/:deviceId/policy',
    body: ADMIN_JSON,
    handler: 'putPolicy',
    console: 'admin',
  },
  {
    surface: 'admin',
    method: 'delete',
    path: '/devices/:deviceId/restriction',
    body: 'none',
    handler: 'clearRestriction',
    console: 'admin',
  },
];

/** The handlers of the rows; a change lets the device's held messages look again (its send queue). */
export function policyAdminHandlers(
  s: Uses<'redis' | 'config' | 'acceptor'>,
): Record<PolicyAdminName, RequestHandler> {
  const d: PolicyDeps = {
    redis: s.redis,
    config: s.config.sendPolicy,
    queueOf: (deviceId) => s.acceptor.queue(deviceId),
  };
  return {
    getPolicy: getPolicyRoute(d),
    putPolicy: putPolicyRoute(d),
    clearRestriction: clearRestrictionRoute(d),
  };
}

const paramsSchema = Joi.object({ deviceId: Joi.string().pattern(DEVICE_ID_PATTERN).required() }).unknown(
  true,
);
const deviceIdOf = (req: Request): string => parse(paramsSchema, req.params).deviceId as string;

/** GET /devices/:deviceId/policy */
function getPolicyRoute(d: PolicyDeps): RequestHandler {
  return async (req, res) => {
    parse(emptyQuerySchema, req.query);
    res.status(200).json({ success: true, ...(await devicePolicy(d, deviceIdOf(req))) });
  };
}

/** PUT /devices/:deviceId/policy — overrides some fields of the device's policy (policy.ts: changePolicy). */
function putPolicyRoute(d: PolicyDeps): RequestHandler {
  return async (req, res) => {
    parse(emptyQuerySchema, req.query);
    const deviceId = deviceIdOf(req);
    const override = parse(policyOverrideSchema, req.body ?? {}) as PolicyOverride;
    res.status(200).json({ success: true, ...(await changePolicy(d, deviceId, override)) });
  };
}

/** DELETE /devices/:deviceId/restriction — ends the device's pause now (policy.ts: endRestriction). */
function clearRestrictionRoute(d: PolicyDeps): RequestHandler {
  return async (req, res) => {
    parse(emptyQuerySchema, req.query);
    const deviceId = deviceIdOf(req);
    res.status(200).json({ success: true, ...(await endRestriction(d, deviceId)) });
  };
}
