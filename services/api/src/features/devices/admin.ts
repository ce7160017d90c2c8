import type { RequestHandler } from 'express';
import { Joi } from '@mgw/contracts';
import { CONNECT_METHODS, ERRORS, PHONE_PATTERN, emptyQuerySchema, type ConnectMethod } from '@mgw/contracts';
import type { Uses } from '../../api-services.js';
import { ApiError } from '../../http/api-error.js';
import { deviceIdOf } from '../../http/route-helpers.js';
import { adminScopeOf } from '../../http/session/console-scope.js';
import { ADMIN_JSON, type AdminRoute } from '../../http/route-table.js';
import { parse } from '../../http/validation.js';
import { cloudConnection, type CloudConnection } from '../cloud/index.js';
import { passkeyRoutes } from '../connection/index.js';
import { qrImage } from './device-directory.js';
import {
  devicesDeps,
  deviceMessage,
  deviceMessages,
  listDevices,
  showDevice,
  type DevicesDeps,
  type DevicesServices,
  type WorkspaceDevices,
} from './devices.js';
import { DIRECTIONS, type DirectionFilter } from './recent-messages.js';

export type DeviceAdminName =
  | 'listDevices'
  | 'getDevice'
  | 'connectDevice'
  | 'passkey'
  | 'passkeyAssertion'
  | 'passkeyConfirm'
  | 'disconnectDevice'
  | 'deviceMessages'
  | 'deviceMessage';

/**
 * The Devices page (list, one device, link — with a passkey-gated link's steps —, log out) and the
 * Messages page (recent, one by id).
 */
export const deviceAdminRoutes: AdminRoute<DeviceAdminName>[] = [
  { surface: 'admin', method: 'get', path: '/devices', handler: 'listDevices', console: 'read' },
  { surface: 'admin', method: 'get', path: '/devices/:deviceId', handler: 'getDevice', console: 'read' },
  {
    surface: 'admin',
    method: 'post',
    path: '/devices/:deviceId/connect',
    body: ADMIN_JSON,
    handler: 'connectDevice',
    console: 'admin',
  },
  // A passkey-gated link (docs/passkeys.md): the public /connect/passkey routes, for any device.
  {
    surface: 'admin',
    method: 'get',
    path: '/devices/:deviceId/connect/passkey',
    handler: 'passkey',
    console: 'read',
  },
  {
    surface: 'admin',
    method: 'post',
    path: '/devices/:deviceId/connect/passkey',
    body: ADMIN_JSON,
    handler: 'passkeyAssertion',
    console: 'admin',
  },
  {
    surface: 'admin',
    method: 'post',
    path: '/devices/:deviceId/connect/passkey/confirm',
    body: ADMIN_JSON,
    handler: 'passkeyConfirm',
    console: 'admin',
  },
  {
    surface: 'admin',
    method: 'post',
    path: '/devices/:deviceId/disconnect',
    body: 'none',
    handler: 'disconnectDevice',
    console: 'admin',
  },
  {
    surface: 'admin',
    method: 'get',
    path: '/devices/:deviceId/messages',
    handler: 'deviceMessages',
    console: 'read',
  },
  {
    surface: 'admin',
    method: 'get',
    path: '/devices/:deviceId/messages/:messageId',
    handler: 'deviceMessage',
    console: 'read',
  },
];

/** The passkey routes' services (features/connection), whatever they come to need. */
type PasskeyServices = Parameters<typeof passkeyRoutes>[0];

/** The handlers of the rows, over the one device directory of these services (devicesDeps). */
export function deviceAdminHandlers(
  s: DevicesServices & PasskeyServices & Uses<'workspaces' | 'workspaceCache' | 'graph' | 'cloudSend'>,
): Record<DeviceAdminName, RequestHandler> {
  const d = devicesDeps(s);
  const cloud = cloudConnection(s);
  const passkey = passkeyRoutes(s, deviceIdOf);
  const owners = {
    devices: (workspace: string) => s.workspaces.devices(workspace),
    ownerOf: (deviceId: string) => s.workspaceCache.ownerOf(deviceId),
  };
  return {
    listDevices: listDevicesRoute(d, owners),
    getDevice: getDeviceRoute(d),
    connectDevice: connectDeviceRoute(d, cloud),
    passkey: passkey.get,
    passkeyAssertion: passkey.assertion,
    passkeyConfirm: passkey.confirm,
    disconnectDevice: disconnectDeviceRoute(d, cloud),
    deviceMessages: deviceMessagesRoute(d),
    deviceMessage: deviceMessageRoute(d),
  };
}

export const connectBodySchema = Joi.object<{
  method: ConnectMethod;
  phoneNumber?: string;
  forceNew: boolean;
}>({
  method: Joi.string()
    .valid(...CONNECT_METHODS)
    .default('qrCode'),
  phoneNumber: Joi.string()
    .pattern(PHONE_PATTERN)
    .when('method', { is: 'pairingCode', then: Joi.required() })
    .messages({
      'string.pattern.base':
        '{{#label}} must be a phone number in international format: digits only, 7 to 15',
    }),
  forceNew: Joi.boolean().default(false),
});

export const messagesQuerySchema = Joi.object<{ limit: number; direction: DirectionFilter }>({
  limit: Joi.number().integer().min(1).max(200).default(50),
  direction: Joi.string()
    .valid(...DIRECTIONS)
    .default('all'),
});

/** GET /devices — a console's: its workspace's devices only. */
function listDevicesRoute(d: DevicesDeps, owners: Omit<WorkspaceDevices, 'workspace'>): RequestHandler {
  return async (req, res) => {
    parse(emptyQuerySchema, req.query);
    const scope = adminScopeOf(res);
    const devices = await listDevices(d, scope ? { ...owners, workspace: scope.workspace } : undefined);
    res.status(200).json({ success: true, devices });
  };
}

/** GET /devices/:deviceId — with the pairing in progress (its current QR or code), if any. */
function getDeviceRoute(d: DevicesDeps): RequestHandler {
  return async (req, res) => {
    parse(emptyQuerySchema, req.query);
    res.status(200).json({ success: true, ...(await showDevice(d, deviceIdOf(req))) });
  };
}

/**
 * POST /devices/:deviceId/connect — the public /connect, for any device: the same request to the
 * connection service (one pairing per device, whoever asks). The QR comes raw and as a PNG.
 */
function connectDeviceRoute(d: DevicesDeps, cloud: CloudConnection): RequestHandler {
  return async (req, res) => {
    parse(emptyQuerySchema, req.query);
    const deviceId = deviceIdOf(req);
    const body = parse(connectBodySchema, req.body ?? {});
    d.directory.note(deviceId);
    // A Cloud API device is connected by checking its credentials, not paired (features/cloud).
    if (await cloud.isCloud(deviceId)) {
      res.status(200).json(await cloud.connect(deviceId, body.method));
      return;
    }
    const outcome = await d.connection.request(
      {
        action: 'connect',
        deviceId,
        method: body.method,
        ...(body.phoneNumber !== undefined ? { phoneNumber: body.phoneNumber } : {}),
        forceNew: body.forceNew,
        rawQrCode: true,
      },
      req.log,
    );
    const { qrCode, ...rest } = outcome.body as Record<string, unknown>;
    const answer: Record<string, unknown> =
      typeof qrCode === 'string' ? { ...rest, qr: qrCode, qrImage: await qrImage(qrCode) } : rest;
    // The pairing's QR or code was used and the link waits for its passkey: where it stands.
    if (rest.status === 'connecting' && answer.qr === undefined && rest.pairingCode === undefined) {
      const passkey = (await d.directory.pairing(deviceId))?.passkey;
      if (passkey) answer.passkey = passkey;
    }
    res.status(outcome.status).json(answer);
  };
}

/** POST /devices/:deviceId/disconnect — logs the account out, like the public /disconnect. */
function disconnectDeviceRoute(d: DevicesDeps, cloud: CloudConnection): RequestHandler {
  return async (req, res) => {
    parse(emptyQuerySchema, req.query);
    const deviceId = deviceIdOf(req);
    if (await cloud.isCloud(deviceId)) {
      res.status(200).json(await cloud.disconnect(deviceId));
      return;
    }
    const outcome = await d.connection.request({ action: 'disconnect', deviceId }, req.log);
    res.status(outcome.status).json(outcome.body);
  };
}

/** GET /devices/:deviceId/messages?limit=50&direction=all|outbound|inbound */
function deviceMessagesRoute(d: DevicesDeps): RequestHandler {
  return async (req, res) => {
    const { limit, direction } = parse(messagesQuerySchema, req.query);
    const page = await deviceMessages(d, deviceIdOf(req), limit, direction);
    res.status(200).json({ success: true, ...page });
  };
}

/** GET /devices/:deviceId/messages/:messageId — any message of the device still kept. */
function deviceMessageRoute(d: DevicesDeps): RequestHandler {
  return async (req, res) => {
    parse(emptyQuerySchema, req.query);
    const found = await deviceMessage(d, deviceIdOf(req), String(req.params.messageId ?? ''));
    if (found.kind === 'not_found') throw new ApiError(404, ERRORS.messageNotFound);
    res.status(200).json({ success: true, message: found.message });
  };
}
