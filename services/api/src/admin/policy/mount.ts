import type { Request, RequestHandler } from 'express';
import { Joi } from '@mgw/contracts';
import { DEVICE_ID_PATTERN, emptyQuerySchema } from '@mgw/contracts';
import { policyOverrideSchema, type PolicyOverride } from '@mgw/store';
import { parse } from '../../http/validation.js';
import type { AdminMount } from '../admin-routes.js';
import { changePolicy, devicePolicy, endRestriction, type PolicyDeps } from './policy.js';

/** A device's sending policy (its overrides, what is in force) and the end of its pause. */
export const policy: AdminMount = ({ s, guard, body, none, devices }) => {
  const d: PolicyDeps = { redis: s.redis, config: s.config.sendPolicy, queueOf: devices.queueOf };
  return [
    { method: 'get', path: '/devices/:deviceId/policy', handlers: [guard, getPolicyRoute(d)] },
    { method: 'put', path: '/devices/:deviceId/policy', handlers: [guard, body, putPolicyRoute(d)] },
    {
      method: 'delete',
      path: '/devices/:deviceId/restriction',
      handlers: [guard, none, clearRestrictionRoute(d)],
    },
  ];
};

const paramsSchema = Joi.object({ deviceId: Joi.string().pattern(DEVICE_ID_PATTERN).required() }).unknown(
  true,
);
const deviceIdOf = (req: Request): string => parse(paramsSchema, req.params).deviceId as string;

/** GET /devices/:deviceId/policy */
export function getPolicyRoute(d: PolicyDeps): RequestHandler {
  return async (req, res) => {
    parse(emptyQuerySchema, req.query);
    res.status(200).json({ success: true, ...(await devicePolicy(d, deviceIdOf(req))) });
  };
}

/** PUT /devices/:deviceId/policy — overrides some fields of the device's policy (policy.ts: changePolicy). */
export function putPolicyRoute(d: PolicyDeps): RequestHandler {
  return async (req, res) => {
    parse(emptyQuerySchema, req.query);
    const deviceId = deviceIdOf(req);
    const override = parse(policyOverrideSchema, req.body ?? {}) as PolicyOverride;
    res.status(200).json({ success: true, ...(await changePolicy(d, deviceId, override)) });
  };
}

/** DELETE /devices/:deviceId/restriction — ends the device's pause now (policy.ts: endRestriction). */
export function clearRestrictionRoute(d: PolicyDeps): RequestHandler {
  return async (req, res) => {
    parse(emptyQuerySchema, req.query);
    const deviceId = deviceIdOf(req);
    res.status(200).json({ success: true, ...(await endRestriction(d, deviceId)) });
  };
}
