import type { Request, RequestHandler } from 'express';
import Joi from 'joi';
import {
  CONNECT_METHODS,
  DEVICE_ID_PATTERN,
  ERRORS,
  PHONE_PATTERN,
  emptyQuerySchema,
  type ConnectMethod,
  type MessageRecord,
} from '@mgw/contracts';
import type { RedisClient } from '@mgw/common';
import type {
  BatchStore,
  InboundStore,
  MessageKindStore,
  MessageRevisions,
  MessageStore,
  SendQueue,
  SendingView,
} from '@mgw/store';
import { ApiError } from '../http/api-error.js';
import type { ConnectionServiceClient } from '../clients/connection-service-client.js';
import { parse } from '../http/validation.js';
import { qrImage, type DeviceDirectory } from './device-directory.js';
import { recentMessages } from './recent-messages.js';
import { messageViews } from './message-view.js';

export interface DevicesDeps {
  directory: DeviceDirectory;
  /** Each linked device's usage of its sending policy and its pause (the `sending` of /status). */
  sending: (deviceId: string) => Promise<SendingView>;
  connection: ConnectionServiceClient;
  messages: MessageStore;
  /** Edits and deletes shown on records (read/revised-record.ts). */
  revisions: MessageRevisions;
  /** Kind fields and mentions shown on records, and the phone <-> LID map (message-view.ts). */
  kinds: MessageKindStore;
  redis: RedisClient;
  /** Messages contacts wrote (found by id: their writer, group and text). */
  inbound: InboundStore;
  batches: BatchStore;
  queueOf: (deviceId: string) => SendQueue;
}

const deviceIdSchema = Joi.string().pattern(DEVICE_ID_PATTERN).required().messages({
  'string.pattern.base':
    '"deviceId" must be a device id: 1-32 characters of a-z, 0-9, _ or -, starting with a letter or digit',
});

export function deviceIdOf(req: Request): string {
  return parse(Joi.object({ deviceId: deviceIdSchema }).unknown(true), req.params).deviceId as string;
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

const messagesQuerySchema = Joi.object<{ limit: number }>({
  limit: Joi.number().integer().min(1).max(200).default(50),
});

/** GET /devices */
export function listDevicesRoute(d: DevicesDeps): RequestHandler {
  return async (req, res) => {
    parse(emptyQuerySchema, req.query);
    const devices = await d.directory.list();
    const withUsage = await Promise.all(
      devices.map(async (device) =>
        device.linked || device.status !== 'disconnected'
          ? { ...device, sending: await d.sending(device.deviceId) }
          : device,
      ),
    );
    res.status(200).json({ success: true, devices: withUsage });
  };
}

/** GET /devices/:deviceId — with the pairing in progress (its current QR or code), if any. */
export function getDeviceRoute(d: DevicesDeps): RequestHandler {
  return async (req, res) => {
    parse(emptyQuerySchema, req.query);
    const deviceId = deviceIdOf(req);
    const [device, pairing] = await Promise.all([d.directory.get(deviceId), d.directory.pairing(deviceId)]);
    res.status(200).json({ success: true, device, ...(pairing ? { pairing } : {}) });
  };
}

/**
 * POST /devices/:deviceId/connect — the public /connect, for any device: the same request to the
 * connection service (one pairing per device, whoever asks). The QR comes raw and as a PNG.
 */
export function connectDeviceRoute(d: DevicesDeps): RequestHandler {
  return async (req, res) => {
    parse(emptyQuerySchema, req.query);
    const deviceId = deviceIdOf(req);
    const body = parse(connectBodySchema, req.body ?? {});
    d.directory.note(deviceId);
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
    const answer =
      typeof qrCode === 'string' ? { ...rest, qr: qrCode, qrImage: await qrImage(qrCode) } : rest;
    res.status(outcome.status).json(answer);
  };
}

/** POST /devices/:deviceId/disconnect — logs the account out, like the public /disconnect. */
export function disconnectDeviceRoute(d: DevicesDeps): RequestHandler {
  return async (req, res) => {
    parse(emptyQuerySchema, req.query);
    const deviceId = deviceIdOf(req);
    const outcome = await d.connection.request({ action: 'disconnect', deviceId }, req.log);
    res.status(outcome.status).json(outcome.body);
  };
}

/** GET /devices/:deviceId/messages?limit=50 */
export function deviceMessagesRoute(d: DevicesDeps): RequestHandler {
  return async (req, res) => {
    const { limit } = parse(messagesQuerySchema, req.query);
    const deviceId = deviceIdOf(req);
    const recent = await recentMessages(
      { queue: d.queueOf(deviceId), messages: d.messages, batches: d.batches },
      deviceId,
      limit,
    );
    const messages = await messageViews(d, deviceId, recent.messages);
    res.status(200).json({ success: true, ...recent, messages });
  };
}

/** GET /devices/:deviceId/messages/:messageId — any message of the device still kept. */
export function deviceMessageRoute(d: DevicesDeps): RequestHandler {
  return async (req, res) => {
    parse(emptyQuerySchema, req.query);
    const deviceId = deviceIdOf(req);
    const id = String(req.params.messageId ?? '');
    const record = id.length <= 128 ? await d.messages.get(deviceId, id) : undefined;
    if (!record || record.deviceId !== deviceId) throw new ApiError(404, ERRORS.messageNotFound);
    // A message a contact wrote: as the public GET /messages/:id shows it (its writer, its group).
    const shown = record.direction === 'inbound' ? await d.inbound.get(deviceId, id) : record;
    if (!shown) throw new ApiError(404, ERRORS.messageNotFound);
    const [view] = await messageViews(d, deviceId, [shown as unknown as MessageRecord]);
    res.status(200).json({ success: true, message: view });
  };
}

/** GET /devices/:deviceId/batches/:batchId — a list's counts, like the public GET /batches/:batchId. */
export function deviceBatchRoute(d: DevicesDeps): RequestHandler {
  return async (req, res) => {
    parse(emptyQuerySchema, req.query);
    const deviceId = deviceIdOf(req);
    const id = String(req.params.batchId ?? '');
    const batch = id.length <= 128 ? await d.batches.get(deviceId, id) : undefined;
    if (!batch) throw new ApiError(404, ERRORS.batchNotFound);
    res.status(200).json({ success: true, batch });
  };
}
