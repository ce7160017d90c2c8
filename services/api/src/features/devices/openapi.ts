/** The devices' admin routes in the admin document (admin.ts): their operations and answers. */
import {
  CONNECTION_STATUSES,
  DEVICE_ENGINES,
  MESSAGE_STATUSES,
  PASSKEY_STEPS,
  emptyQuerySchema,
} from '@mgw/contracts';
import type { ApiConfig } from '../../config.js';
import type { AdminOperationSpec } from '../../openapi/admin-operation.js';
import { mirrored } from '../../openapi/admin-operation.js';
import type { JsonSchema } from '../../openapi/joi-schema.js';
import { operation } from '../../openapi/operation.js';
import { closed, int, ref, str, timestamp } from '../../openapi/schema-helpers.js';
import { connectionOperations, connectionSchemas } from '../connection/index.js';
import { connectBodySchema, messagesQuerySchema, type DeviceAdminName } from './admin.js';

const yes = { const: true } as const;

/** The `sending` of /status without its `health` (a device view carries its health beside it). */
function sendingWithoutHealth(): JsonSchema {
  const sending = connectionSchemas.Sending as { properties: Record<string, JsonSchema>; required: string[] };
  const { health: _health, ...properties } = sending.properties;
  return closed(
    properties,
    sending.required.filter((name) => name !== 'health'),
  );
}

const passkey = closed(
  { step: { enum: [...PASSKEY_STEPS] }, expiresAt: timestamp('When the passkey request expires.') },
  ['step', 'expiresAt'],
);

export const deviceAdminSchemas: Record<string, JsonSchema> = {
  AdminSending: sendingWithoutHealth(),
  AdminDevice: closed(
    {
      deviceId: str('The device id.'),
      engine: {
        enum: [...DEVICE_ENGINES],
        description:
          '`linked` (QR or pairing code) or `cloud` (a Cloud API number: its status, number and name are its own).',
      },
      status: { enum: [...CONNECTION_STATUSES] },
      linked: { type: 'boolean', description: 'Has credentials (in the linked set): a sender serves it.' },
      phone: str('The linked number.'),
      name: str("The account's name."),
      profilePic: str('URL of its profile picture.'),
      queued: int('Messages waiting in its queue.'),
      updatedAt: str('When its session record last changed.'),
      connectedAt: str('When it last connected.'),
      lastDisconnectReason: str('Why it last disconnected.'),
      lastDisconnectAt: str('When it last disconnected.'),
      passkeyStep: {
        enum: [...PASSKEY_STEPS],
        description: 'While connecting: the step of a passkey-gated link.',
      },
      sending: {
        ...ref('AdminSending'),
        description: "Linked or connecting: today's usage of its policy and its pause.",
      },
      health: {
        ...ref('DeviceHealth'),
        description: 'Linked or connecting: its health score and what cost it points.',
      },
    },
    ['deviceId', 'engine', 'status', 'linked', 'queued'],
  ),
  AdminPairing: closed(
    {
      state: { enum: ['starting', 'showing', 'failed', 'paired'] },
      method: { enum: ['qrCode', 'pairingCode'] },
      qr: str('The raw QR string, while a QR pairing shows one.'),
      qrImage: str('The same QR as a PNG data URL.'),
      pairingCode: str('The pairing code to enter on the phone.'),
      reason: str('Why it failed.'),
      passkey: { ...passkey, description: 'A passkey-gated link: its step and when its request expires.' },
    },
    ['state', 'method'],
  ),
  AdminBatchCounts: closed(
    {
      batchId: str('The batch.'),
      counts: {
        ...closed(
          {
            ...Object.fromEntries(MESSAGE_STATUSES.map((st) => [st, int(`Messages ${st}.`)])),
            held: int('Of the queued ones, how many the sender holds (its stored counts only).'),
          },
          [...MESSAGE_STATUSES],
        ),
        description:
          'Messages of the whole batch by status (its stored counts, or those of the messages listed).',
      },
      total: int('Messages of the batch.'),
    },
    ['batchId', 'counts', 'total'],
  ),
};

export function deviceAdminOperations(
  config: ApiConfig,
  op: (spec: AdminOperationSpec) => JsonSchema,
): Record<DeviceAdminName, JsonSchema> {
  const link = connectionOperations(config, (spec) => operation(spec, config));
  const tag = 'Devices' as const;
  return {
    listDevices: op({
      tag,
      summary: 'Every device',
      description:
        "Every device the gateway knows (a console session: its workspace's), each linked or connecting one with its sending usage and health.",
      query: emptyQuerySchema,
      success: {
        status: 200,
        schema: closed({ success: yes, devices: { type: 'array', items: ref('AdminDevice') } }, [
          'success',
          'devices',
        ]),
        description: 'The devices.',
      },
      errors: [],
    }),
    getDevice: op({
      tag,
      summary: 'One device',
      description: 'The device, with the pairing in progress (its current QR or code), if any.',
      query: emptyQuerySchema,
      success: {
        status: 200,
        schema: closed({ success: yes, device: ref('AdminDevice'), pairing: ref('AdminPairing') }, [
          'success',
          'device',
        ]),
        description: 'The device.',
      },
      errors: [],
    }),
    connectDevice: op({
      tag,
      summary: 'Link the device',
      description:
        "The public POST /connect for any device: the QR comes raw (`qr`) and as a PNG (`qrImage`). Once the QR or code was used and the link waits for its passkey: `passkey`. A Cloud API device is connected after its credentials are checked again: `{ success: true, status: 'connected' }` (422 when Meta refused them, 502 when the Graph API could not be reached, 400 for `method: 'pairingCode'`).",
      query: emptyQuerySchema,
      body: connectBodySchema,
      success: {
        status: 200,
        schema: closed(
          {
            success: yes,
            status: { enum: [...CONNECTION_STATUSES] },
            qr: str('QR mode: the raw QR string.'),
            qrImage: str('The same QR as a PNG data URL.'),
            pairingCode: str('Pairing-code mode: the code to enter on the phone.'),
            message: str('E.g. `Already connected`.'),
            passkey,
          },
          ['success'],
        ),
        description: 'Pairing started, joined, or already connected.',
      },
      errors: [409, 422, 502, 504],
    }),
    passkey: mirrored(link.passkey),
    passkeyAssertion: mirrored(link.passkeyAssertion),
    passkeyConfirm: mirrored(link.passkeyConfirm),
    disconnectDevice: op({
      tag,
      summary: 'Log the device out',
      description:
        "Logs the account out, like the public POST /disconnect (a Cloud API device's configuration is forgotten).",
      query: emptyQuerySchema,
      success: { status: 200, schema: 'DisconnectResult', description: 'Logged out, or nothing to do.' },
      errors: [409, 413, 502, 504],
    }),
    deviceMessages: op({
      tag,
      summary: "The device's recent messages",
      description:
        'Its newest messages (sent and received), newest first, as the Messages page shows them, and the progress of each batch listed.',
      query: messagesQuerySchema,
      success: {
        status: 200,
        schema: closed(
          {
            success: yes,
            messages: { type: 'array', items: ref('AdminMessage') },
            batches: { type: 'array', items: ref('AdminBatchCounts') },
          },
          ['success', 'messages', 'batches'],
        ),
        description: 'The messages.',
      },
      errors: [],
    }),
    deviceMessage: op({
      tag,
      summary: 'One message of the device',
      description: 'Any message of the device still kept, as the Messages page shows it.',
      query: emptyQuerySchema,
      success: {
        status: 200,
        schema: closed({ success: yes, message: ref('AdminMessage') }, ['success', 'message']),
        description: 'The message.',
      },
      errors: [],
    }),
  };
}
