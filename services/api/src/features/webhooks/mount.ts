import { ERRORS, emptyQuerySchema, webhookBodySchema } from '@mgw/contracts';
import { FIELD_ALLOWANCE, feature, type BodySpec } from '../../http/route-table.js';
import { webhookOperations, webhookSchemas, webhookAdminOperations } from './openapi.js';
import type { Request, RequestHandler, Response } from 'express';
import { OutboundError } from '@mgw/common';
import { ApiError } from '../../http/api-error.js';
import type { Uses } from '../../api-services.js';
import { authOf } from '../../http/auth.js';
import { parse } from '../../http/validation.js';
import { webhookAdminHandlers, webhookAdminRoutes, type WebhookAdminName } from './admin.js';

/** A webhook body is a URL and a list of at most seven event types. */
export const WEBHOOK_BODY_LIMIT_BYTES = 8 * 1024;
const webhookBody: BodySpec = {
  json: {
    limitBytes: WEBHOOK_BODY_LIMIT_BYTES,
    tooLargeError: ERRORS.webhookBodyTooLarge,
    maxValues: FIELD_ALLOWANCE,
  },
};

/**
 * The device's signed webhook endpoint (docs/events.md), set, read and removed by its token; and
 * any device's, by the admin API (admin.ts).
 */
export const webhooks = feature<'put' | 'get' | 'remove', WebhookAdminName>({
  name: 'webhooks',
  routes: [
    { method: 'put', path: '/webhook', limit: 'webhook', body: webhookBody, handler: 'put' },
    { method: 'get', path: '/webhook', limit: 'webhook', handler: 'get' },
    { method: 'delete', path: '/webhook', limit: 'webhook', body: 'none', handler: 'remove' },
    ...webhookAdminRoutes,
  ],
  handlers: (s) => ({
    ...webhookHandlers(s),
    ...webhookAdminHandlers((deviceOf) => webhookHandlers(s, deviceOf)),
  }),
  operations: webhookOperations,
  schemas: webhookSchemas,
  adminOperations: webhookAdminOperations,
});

type WebhookServices = Uses<'webhooks' | 'outbound'>;

/** The three handlers, for the token's device (public API) or the one `deviceOf` names. */
export type WebhookHandlers = Record<'put' | 'get' | 'remove', RequestHandler>;

function webhookHandlers(s: WebhookServices, deviceOf: DeviceOf = tokenDevice): WebhookHandlers {
  return {
    put: putWebhookRoute(s, deviceOf),
    get: getWebhookRoute(s, deviceOf),
    remove: deleteWebhookRoute(s, deviceOf),
  };
}

/** Success message of DELETE /webhook. */
export const WEBHOOK_REMOVED = 'Webhook removed';

/** Whose webhook a request is about: the token's device (public API) or a path's (admin API). */
export type DeviceOf = (req: Request, res: Response) => string;
const tokenDevice: DeviceOf = (_req, res) => authOf(res).deviceId;

/**
 * PUT /webhook: sets the device's endpoint. The URL must pass the outbound guard now (a private
 * address is refused unless ALLOWED_PRIVATE_HOSTS lets it through); the notifier checks it again
 * on every delivery, since DNS may change. The secret is in the answer only when it was made.
 */
function putWebhookRoute(s: WebhookServices, deviceOf: DeviceOf = tokenDevice): RequestHandler {
  return async (req, res) => {
    const deviceId = deviceOf(req, res);
    parse(emptyQuerySchema, req.query);
    const body = parse(webhookBodySchema, req.body ?? {});
    try {
      await s.outbound.check(body.url);
    } catch (err) {
      if (!(err instanceof OutboundError)) throw err;
      throw ApiError.invalid([{ path: ['url'], message: ERRORS.webhookUrlNotAllowed }]);
    }
    const data = await s.webhooks.set(deviceId, body);
    res.status(200).json({ success: true, data });
  };
}

/** GET /webhook: the endpoint without its secret; 404 when none. */
function getWebhookRoute(s: WebhookServices, deviceOf: DeviceOf = tokenDevice): RequestHandler {
  return async (req, res) => {
    const deviceId = deviceOf(req, res);
    parse(emptyQuerySchema, req.query);
    const data = await s.webhooks.get(deviceId);
    if (!data) throw new ApiError(404, ERRORS.webhookNotFound);
    res.status(200).json({ success: true, data });
  };
}

/** DELETE /webhook: removes the endpoint and the events not delivered yet; 404 when none. */
function deleteWebhookRoute(s: WebhookServices, deviceOf: DeviceOf = tokenDevice): RequestHandler {
  return async (req, res) => {
    const deviceId = deviceOf(req, res);
    parse(emptyQuerySchema, req.query);
    if (!(await s.webhooks.remove(deviceId))) throw new ApiError(404, ERRORS.webhookNotFound);
    res.status(200).json({ success: true, message: WEBHOOK_REMOVED });
  };
}
