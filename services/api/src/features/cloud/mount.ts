import type { Request, RequestHandler, Response } from 'express';
import {
  CONNECTION_MESSAGES,
  ERRORS,
  cloudDeviceBodySchema,
  cloudTemplatesQuerySchema,
  emptyQuerySchema,
  type ConnectMethod,
} from '@mgw/contracts';
import type { Uses } from '../../api-services.js';
import { ApiError } from '../../http/api-error.js';
import { authOf } from '../../http/auth.js';
import { deviceIdOf } from '../../http/route-helpers.js';
import { FIELD_ALLOWANCE, feature, type BodySpec } from '../../http/route-table.js';
import { parse } from '../../http/validation.js';
import { cloudAdminHandlers, cloudAdminRoutes, type CloudAdminName } from './admin.js';
import type { GraphRefused, GraphUnreachable } from './check-number.js';
import { cloudStatus } from './cloud-status.js';
import { configureCloud, type CloudDeps, type DeviceLinked, type NumberTaken } from './configure-cloud.js';
import { connectCloud, type NotCloud } from './connect-cloud.js';
import { disconnectCloud } from './disconnect-cloud.js';
import { listTemplates } from './list-templates.js';
import { cloudOperations, cloudSchemas } from './openapi.js';
import { showCloud } from './show-cloud.js';

/** Two ids, three secrets (a token is at most 4 KB) and three settings: 16 KB is room to spare. */
const CLOUD_BODY: BodySpec = {
  json: { limitBytes: 16 * 1024, tooLargeError: ERRORS.cloudBodyTooLarge, maxValues: FIELD_ALLOWANCE },
};

/** The public routes' handlers, each the key of its OpenAPI operation (openapi.ts). */
export type CloudName = 'putCloud' | 'getCloud' | 'deleteCloud' | 'getCloudTemplates';

/** The services /connect, /status and /disconnect of a cloud device use (`cloudConnection`). */
type ConnectionServices = Uses<'redis' | 'cloudDevices' | 'graph' | 'cloudSend'>;

/** The services the cloud routes use. */
export type CloudServices = ConnectionServices & Uses<'cloudTemplates'>;

/**
 * A device's Cloud API configuration (docs/cloud-api.md): the token's device makes itself a
 * Cloud API number (PUT, checked with the Graph API first), shows it (GET, never a secret) or
 * forgets it (DELETE), and lists its number's message templates (GET /cloud/templates). Reads
 * count against RATE_LIMIT_STATUS, changes against RATE_LIMIT_CONNECT: configuring a number is
 * part of linking it. The admin API serves the same for any device.
 */
export const cloud = feature<CloudName, CloudAdminName>({
  name: 'cloud',
  routes: [
    { method: 'put', path: '/cloud', limit: 'connect', body: CLOUD_BODY, handler: 'putCloud' },
    { method: 'get', path: '/cloud', limit: 'status', handler: 'getCloud' },
    { method: 'delete', path: '/cloud', limit: 'connect', body: 'none', handler: 'deleteCloud' },
    { method: 'get', path: '/cloud/templates', limit: 'status', handler: 'getCloudTemplates' },
    ...cloudAdminRoutes,
  ],
  handlers: (s) => ({
    ...cloudRoutes(s),
    // The admin API's: the same handlers, for the device its path names.
    ...cloudAdminHandlers(cloudRoutes(s, deviceIdOf)),
  }),
  operations: cloudOperations,
  schemas: cloudSchemas,
});

const cloudDeps = (s: ConnectionServices): CloudDeps => ({
  redis: s.redis,
  cloudDevices: s.cloudDevices,
  graph: s.graph,
});

/** The handlers for the token's device (public API) or the path's (admin API). */
function cloudRoutes(
  s: CloudServices,
  deviceOf: (req: Request, res: Response) => string = (_req, res) => authOf(res).deviceId,
): Record<CloudName, RequestHandler> {
  const d = cloudDeps(s);
  return {
    putCloud: async (req, res) => {
      parse(emptyQuerySchema, req.query);
      const input = parse(cloudDeviceBodySchema, req.body ?? {});
      const deviceId = deviceOf(req, res);
      const outcome = await configureCloud(d, deviceId, input);
      if (!outcome.ok) throw cloudError(outcome);
      // This process's /send sees the new engine at once (the others within their cache's seconds).
      s.cloudSend.engines.drop(deviceId);
      // The ids only: never a secret in a log line.
      req.log.info('cloud device configured', { deviceId, phoneNumberId: input.phoneNumberId });
      res.status(200).json({ success: true, data: outcome.data });
    },
    getCloud: async (req, res) => {
      parse(emptyQuerySchema, req.query);
      const data = await showCloud(d, deviceOf(req, res));
      if (!data) throw new ApiError(404, ERRORS.cloudNotConfigured);
      res.status(200).json({ success: true, data });
    },
    deleteCloud: async (req, res) => {
      parse(emptyQuerySchema, req.query);
      const deviceId = deviceOf(req, res);
      if (!(await disconnectCloud(d, deviceId))) throw new ApiError(404, ERRORS.cloudNotConfigured);
      s.cloudSend.engines.drop(deviceId);
      res.status(200).json({ success: true, message: CONNECTION_MESSAGES.cloudForgotten });
    },
    getCloudTemplates: async (req, res) => {
      const query = parse(cloudTemplatesQuerySchema, req.query);
      const outcome = await listTemplates(
        { cloudDevices: s.cloudDevices, templates: s.cloudTemplates },
        deviceOf(req, res),
        query,
      );
      if (!outcome.ok) throw cloudError(outcome);
      res.status(200).json({ success: true, data: outcome.data });
    },
  };
}

/** Why a cloud request was refused, as its HTTP error (never a secret in it). */
export function cloudError(
  outcome: DeviceLinked | NumberTaken | NotCloud | GraphRefused | GraphUnreachable,
): ApiError {
  switch (outcome.reason) {
    case 'device_linked':
      return new ApiError(409, ERRORS.cloudDeviceLinked);
    case 'number_taken':
      return new ApiError(409, ERRORS.cloudNumberTaken);
    case 'not_cloud':
      return new ApiError(404, ERRORS.cloudNotConfigured);
    case 'graph_unreachable':
      return new ApiError(502, ERRORS.cloudGraphUnreachable);
    case 'graph_refused': {
      const code = outcome.subcode === undefined ? `${outcome.code}` : `${outcome.code}/${outcome.subcode}`;
      return new ApiError(422, ERRORS.cloudCredentialsRefused, [
        { path: outcome.field ? [outcome.field] : [], message: `Meta (error ${code}): ${outcome.message}` },
      ]);
    }
  }
}

/**
 * /connect, /status and /disconnect of a cloud device (features/connection and the admin Devices
 * routes ask `isCloud` first, before the connection service, which knows only linked devices).
 */
export function cloudConnection(s: ConnectionServices) {
  const d = cloudDeps(s);
  return {
    isCloud: async (deviceId: string) => (await s.cloudDevices.engineOf(deviceId)) === 'cloud',
    /** /connect: the credentials checked again; `{ success, status: 'connected' }` (no QR, no code). */
    async connect(deviceId: string, method: ConnectMethod): Promise<Record<string, unknown>> {
      if (method === 'pairingCode')
        throw ApiError.invalid([{ path: ['method'], message: ERRORS.cloudNeedsNoPairing }]);
      const outcome = await connectCloud(d, deviceId);
      if (!outcome.ok) throw cloudError(outcome);
      return { success: true, status: 'connected' };
    },
    status: (deviceId: string) => cloudStatus(d, deviceId),
    /** /disconnect: the configuration forgotten (already gone meanwhile: already disconnected). */
    async disconnect(deviceId: string): Promise<Record<string, unknown>> {
      const forgot = await disconnectCloud(d, deviceId);
      s.cloudSend.engines.drop(deviceId);
      return {
        success: true,
        message: forgot ? CONNECTION_MESSAGES.cloudForgotten : CONNECTION_MESSAGES.alreadyDisconnected,
      };
    },
  };
}

export type CloudConnection = ReturnType<typeof cloudConnection>;
