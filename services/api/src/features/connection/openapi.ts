/** Linking, status and logout in the OpenAPI document. */
import {
  CONNECTION_STATUSES,
  FAILURE_REASONS,
  PASSKEY_FAILURES,
  PASSKEY_STEPS,
  PROXY_ERROR_KINDS,
  connectQuerySchema,
  emptyQuerySchema,
  passkeyAssertionBodySchema,
  passkeyConfirmBodySchema,
} from '@mgw/contracts';
import { HEALTH_REASONS, RESTRICTION_REASONS } from '@mgw/store';
import type { ApiConfig } from '../../config.js';
import type { Operations } from '../../http/route-table.js';
import type { JsonSchema } from '../../openapi/joi-schema.js';
import { closed, int, ref, str, timestamp } from '../../openapi/schema-helpers.js';
import type { OperationSpec } from '../../openapi/operation.js';
import type { ConnectionName } from './mount.js';

/** Each route's operation, by its handler's name (mount.ts). */
export function connectionOperations(
  config: ApiConfig,
  operation: (spec: OperationSpec) => JsonSchema,
): Operations<ConnectionName> {
  const r = config.rateLimits;
  const connect: OperationSpec = {
    tag: 'Connection',
    summary: 'Link the device (QR code or pairing code)',
    description:
      "Asks the connection service to link the token's device; answers the current QR (a PNG data URL, or raw with `rawQrCode=true`) or pairing code. A connect during a pairing answers that pairing's current code. A Cloud API device (PUT /cloud) is connected instead: its credentials are checked with the Graph API again and the answer is `{ success: true, status: 'connected' }` (no QR or code; `method=pairingCode` is a 400); 422 when Meta refused them (the device turns disconnected with the reason), 502 when the Graph API could not be reached.",
    rateLimit: r.connect,
    query: connectQuerySchema,
    success: {
      status: 200,
      schema: 'ConnectResult',
      description: 'Pairing started, joined, or already connected.',
    },
    errors: [409, 422, 502, 503, 504],
  };
  return {
    connect: operation(connect),
    postConnect: operation({ ...connect, errors: [...connect.errors, 413] }),
    disconnect: operation({
      tag: 'Connection',
      summary: 'Disconnect (log the account out)',
      description:
        'Logs the account out and deletes its credentials; waiting messages end failed (`logged_out`). A Cloud API device: its configuration and secrets are forgotten and it leaves the senders.',
      rateLimit: r.disconnect,
      query: emptyQuerySchema,
      success: { status: 200, schema: 'DisconnectResult', description: 'Logged out, or nothing to do.' },
      errors: [409, 413, 502, 504],
    }),
    passkey: operation({
      tag: 'Connection',
      summary: 'The passkey request of a link',
      description:
        "An account a passkey guards (docs/passkeys.md): after the QR scan or the pairing code, WhatsApp asks for a WebAuthn assertion. This answers the request (its options, for a browser on a whatsapp.com page: the gateway's browser extension fetches them here), the step the link is at and, from `confirm_code` on, the code the phone shows. 404 when the device's link waits on no passkey.",
      rateLimit: r.status,
      query: emptyQuerySchema,
      success: { status: 200, schema: 'PasskeyRequest', description: 'The pending request.' },
      errors: [404],
    }),
    passkeyAssertion: operation({
      tag: 'Connection',
      summary: 'Hand in the passkey assertion',
      description:
        "The assertion (`PublicKeyCredential.toJSON()` of `navigator.credentials.get` with the request's options) goes to WhatsApp with the link's prologue. 202 when WhatsApp took it (the link moves to `verifying`, then `confirm_code`); 400 when it answers another challenge; 422 when WhatsApp refused it (the attempt ends `passkey_rejected`); 409 when the link is at another step.",
      rateLimit: r.connect,
      query: emptyQuerySchema,
      body: passkeyAssertionBodySchema,
      success: { status: 202, schema: 'PasskeyTaken', description: 'Taken.' },
      errors: [404, 409, 413, 422, 502, 503, 504],
    }),
    passkeyConfirm: operation({
      tag: 'Connection',
      summary: "Confirm the passkey link's code",
      description:
        "The operator compared the code the phone shows with `code` of GET /connect/passkey and confirms it: the link finishes (WhatsApp then links the device as any other). 400 when the code is not the link's; 409 before the code is known.",
      rateLimit: r.connect,
      query: emptyQuerySchema,
      body: passkeyConfirmBodySchema,
      success: { status: 202, schema: 'PasskeyTaken', description: 'Confirmed.' },
      errors: [404, 409, 413, 502, 503, 504],
    }),
    status: operation({
      tag: 'Connection',
      summary: 'Connection status',
      description:
        "The device's status; phone, name and picture while connected. Beyond the spec, a linked device also has `sending` (its usage of the sending policy, its pause) and `health` (a score 0-100 with the reasons that cost it points); a Cloud API device has `engine: 'cloud'`, its number's `qualityRating` and `messagingTier`, and `reason` when a failure disconnected it (its `phone` is the digits of the number Meta displays, its `name` the verified name).",
      rateLimit: r.status,
      query: emptyQuerySchema,
      success: { status: 200, schema: 'Status', description: 'The status.' },
      errors: [],
    }),
  };
}

const nullableInt = (description: string): JsonSchema => ({
  type: ['integer', 'null'],
  minimum: 0,
  description,
});

/**
 * The answers of a link, a logout and the status (with the device's sending and health), and the
 * response schemas of a passkey-gated link (docs/passkeys.md).
 */
export const connectionSchemas: Record<string, JsonSchema> = {
  ConnectResult: closed(
    {
      success: { const: true },
      status: { enum: [...CONNECTION_STATUSES] },
      qrCode: str(
        'QR mode: a PNG data URL (`data:image/png;base64,…`), or the raw QR string with `rawQrCode=true`.',
      ),
      pairingCode: str('Pairing-code mode: eight letters and digits to enter on the phone.'),
      message: str('E.g. `Already connected`.'),
    },
    ['success'],
  ),
  DisconnectResult: closed(
    {
      success: { const: true },
      message: str('`Disconnected and logged out`, `Already disconnected` or `Pairing cancelled`.'),
    },
    ['success', 'message'],
  ),
  Status: closed(
    {
      success: { const: true },
      status: { enum: [...CONNECTION_STATUSES] },
      phone: str('Phone number of the linked account (connected only).'),
      name: str('Account name (connected only).'),
      profilePic: str('URL of the profile picture (connected only, when the account has one).'),
      reason: {
        enum: [
          ...new Set([
            ...PROXY_ERROR_KINDS.map((kind) => `proxy_${kind}`),
            'passkey_required',
            ...PASSKEY_FAILURES,
            ...Object.values(FAILURE_REASONS),
          ]),
        ],
        description:
          "Connecting: the device's proxy is why its connection failed (unreachable, credentials refused, target refused, other), or `passkey_required`: the link waits for the account's passkey (`passkey` says where it stands). Disconnected: how a passkey-gated link ended (expired, refused by WhatsApp, no answer, options missing, failed), or, for a Cloud API device, the failure that turned it disconnected (`cloud_token_expired`, `number_blocked`, …).",
      },
      engine: {
        const: 'cloud',
        description:
          'A Cloud API device (docs/cloud-api.md): its status is its own (`connected` after a /connect whose check passed); absent for a device linked by QR or pairing code.',
      },
      qualityRating: str(
        "A Cloud API device: its number's quality rating as Meta last said it (`GREEN`, `YELLOW`, `RED`, `UNKNOWN`).",
      ),
      messagingTier: str(
        "A Cloud API device: its number's messaging limit tier (`TIER_50` … `TIER_UNLIMITED`), when Meta says one.",
      ),
      passkey: {
        ...closed(
          {
            step: { enum: [...PASSKEY_STEPS] },
            expiresAt: timestamp('When the passkey request expires.'),
          },
          ['step', 'expiresAt'],
        ),
        description:
          'A passkey-gated link (docs/passkeys.md): its step (`assertion`, `verifying`, `confirm_code`, `finishing`) and when its request expires. GET /connect/passkey has the request and the code.',
      },
      sending: ref('Sending'),
    },
    ['success', 'status'],
  ),
  DeviceHealth: closed(
    {
      score: {
        type: 'integer',
        minimum: 0,
        maximum: 100,
        description: '100 less the penalties of `reasons`, at least 0.',
      },
      reasons: {
        type: 'array',
        description: 'What cost the device points, the costliest first; empty at 100.',
        items: closed(
          {
            code: {
              enum: [...Object.values(HEALTH_REASONS)],
              description:
                "A pause in force (reach-out time lock, capped, rate-limited, failures in a row), or what happened in the window (acks 463, acks 429, other refusals, reconnects, logouts), or today's share of first contacts.",
            },
            penalty: { type: 'integer', minimum: 1, maximum: 100, description: 'Points it costs.' },
            message: str('What happened, with its count, for a person.'),
          },
          ['code', 'penalty', 'message'],
        ),
      },
    },
    ['score', 'reasons'],
  ),
  Sending: closed(
    {
      sentToday: int('Messages the device sent in its current cap window (its day, in its time zone).'),
      firstContactsToday: int('Of those, first messages to numbers the account had no chat with.'),
      dailyCap: nullableInt('The cap of the window (the warm-up step while it lasts); null = none.'),
      firstContactCap: nullableInt('The cap on first contacts per window; null = none.'),
      otpReserve: { type: 'number', description: 'Share of each cap only OTPs may use.' },
      warmupDay: int('Day of the warm-up after the account was linked (1 = the link day), while it lasts.'),
      quietHours: str('No message but OTPs goes between these times (start-end, device time zone).'),
      timeZone: str('The device time zone (IANA).'),
      windowEndsAt: timestamp('When the current window ends and its counters start again.'),
      restriction: closed(
        {
          reason: {
            enum: [...Object.values(RESTRICTION_REASONS)],
            description:
              'Why WhatsApp pushes back: reach-out time lock, ack 463, ack 429, failures in a row.',
          },
          until: timestamp('When sending resumes by itself.'),
          since: timestamp('When the pause began.'),
        },
        ['reason', 'until', 'since'],
      ),
      pausedUntil: timestamp('Waiting messages are held until then (a restriction or quiet hours).'),
      health: ref('DeviceHealth'),
    },
    [
      'sentToday',
      'firstContactsToday',
      'dailyCap',
      'firstContactCap',
      'otpReserve',
      'timeZone',
      'windowEndsAt',
      'health',
    ],
  ),
  PasskeyView: closed(
    {
      step: { enum: [...PASSKEY_STEPS] },
      expiresAt: timestamp('When the passkey request expires.'),
      requestOptions: {
        type: 'object',
        description:
          "WhatsApp's WebAuthn request options (`PublicKeyCredentialRequestOptionsJSON`: challenge, rpId `whatsapp.com`, allowCredentials, userVerification, timeout). A browser on a whatsapp.com page asserts them (`navigator.credentials.get`).",
      },
      code: {
        type: 'string',
        description: 'From `confirm_code` on: the code the phone shows (XXXX-XXXX), to compare and confirm.',
      },
    },
    ['step', 'expiresAt', 'requestOptions'],
  ),
  PasskeyRequest: closed({ success: { const: true }, data: { $ref: '#/components/schemas/PasskeyView' } }, [
    'success',
    'data',
  ]),
  PasskeyTaken: closed(
    {
      success: { const: true },
      data: { $ref: '#/components/schemas/PasskeyView', description: 'Where the link stands now.' },
    },
    ['success'],
  ),
};
