import type { RedisClient } from '@mgw/common';
import type { Request, RequestHandler } from 'express';
import Joi from 'joi';
import { DEVICE_ID_PATTERN, emptyQuerySchema } from '@mgw/contracts';
import {
  clearRestriction,
  policyOverrideSchema,
  readOverrides,
  sendingView,
  writeOverrides,
  type PolicyOverride,
  type SendPolicyConfig,
  type SendQueue,
} from '@mgw/store';
import { parse } from '../http/validation.js';

export interface PolicyDeps {
  redis: RedisClient;
  config: SendPolicyConfig;
  queueOf: (deviceId: string) => SendQueue;
}

const paramsSchema = Joi.object({ deviceId: Joi.string().pattern(DEVICE_ID_PATTERN).required() }).unknown(
  true,
);
const deviceIdOf = (req: Request): string => parse(paramsSchema, req.params).deviceId as string;

/** The device's overrides (what differs from the defaults) and what is in force now, with usage. */
async function policyAnswer(d: PolicyDeps, deviceId: string) {
  const [overrides, sending] = await Promise.all([
    readOverrides(d.redis, deviceId),
    sendingView(d.redis, deviceId, d.config),
  ]);
  return { success: true, deviceId, overrides, sending };
}

/** GET /devices/:deviceId/policy */
export function getPolicyRoute(d: PolicyDeps): RequestHandler {
  return async (req, res) => {
    parse(emptyQuerySchema, req.query);
    res.status(200).json(await policyAnswer(d, deviceIdOf(req)));
  };
}

/**
 * PUT /devices/:deviceId/policy — overrides some fields of the device's sending policy (null
 * removes an override; `restartWarmup` restarts or ends the warm-up). The sender reads the policy
 * for every message, so it applies to the next one.
 */
export function putPolicyRoute(d: PolicyDeps): RequestHandler {
  return async (req, res) => {
    parse(emptyQuerySchema, req.query);
    const deviceId = deviceIdOf(req);
    const override = parse(policyOverrideSchema, req.body ?? {}) as PolicyOverride;
    await writeOverrides(d.redis, deviceId, override);
    // Held messages look again now (a raised cap lets them go at once).
    await d.queueOf(deviceId).promoteJobs();
    res.status(200).json(await policyAnswer(d, deviceId));
  };
}

/**
 * DELETE /devices/:deviceId/restriction — ends the device's pause now (the operator knows better;
 * if WhatsApp still pushes back, the next refused message pauses it again).
 */
export function clearRestrictionRoute(d: PolicyDeps): RequestHandler {
  return async (req, res) => {
    parse(emptyQuerySchema, req.query);
    const deviceId = deviceIdOf(req);
    const cleared = await clearRestriction(d.redis, deviceId);
    if (cleared) await d.queueOf(deviceId).promoteJobs();
    res.status(200).json({ ...(await policyAnswer(d, deviceId)), cleared });
  };
}
