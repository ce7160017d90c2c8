import type { RequestHandler } from 'express';
import { brokerSettingsBodySchema, emptyQuerySchema } from '@mgw/contracts';
import type { ApiServices } from '../api-services.js';
import { authOf } from '../http/auth.js';
import { parse } from '../http/validation.js';

/**
 * GET /events/brokers: the device's broker settings, one per transport (`rabbitmq`, `nats`):
 * whether the notifier publishes its events there and which types (all when `events` is absent).
 * A transport the device never set is on for every event (the default).
 */
export function getEventBrokersRoute(s: Pick<ApiServices, 'brokerSettings'>): RequestHandler {
  return async (req, res) => {
    const { deviceId } = authOf(res);
    parse(emptyQuerySchema, req.query);
    res.status(200).json({ success: true, data: await s.brokerSettings.get(deviceId) });
  };
}

/**
 * PUT /events/brokers: sets the given transports' settings (the others keep theirs). Only on/off
 * and event types: where the brokers are is the operator's setting (EVENTS_RABBITMQ_URL,
 * EVENTS_NATS_URL), never a device's, so no token can point the gateway at a host of its choosing.
 */
export function putEventBrokersRoute(s: Pick<ApiServices, 'brokerSettings'>): RequestHandler {
  return async (req, res) => {
    const { deviceId } = authOf(res);
    parse(emptyQuerySchema, req.query);
    const body = parse(brokerSettingsBodySchema, req.body ?? {});
    res.status(200).json({ success: true, data: await s.brokerSettings.set(deviceId, body) });
  };
}
