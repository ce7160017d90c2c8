/** Linking, status and logout in the OpenAPI document. */
import {
  connectQuerySchema,
  emptyQuerySchema,
  passkeyAssertionBodySchema,
  passkeyConfirmBodySchema,
  PASSKEY_STEPS,
} from '@mgw/contracts';
import type { ApiConfig } from '../../config.js';
import type { JsonSchema } from '../../openapi/joi-schema.js';
import { closed, timestamp } from '../../openapi/schema-helpers.js';
import type { OperationSpec } from '../../openapi/operation.js';

export function connectionPaths(config: ApiConfig, operation: (spec: OperationSpec) => JsonSchema) {
  const r = config.rateLimits;
  const connect: OperationSpec = {
    tag: 'Connection',
    summary: 'Link the device (QR code or pairing code)',
    description:
      "Asks the connection service to link the token's device; answers the current QR (a PNG data URL, or raw with `rawQrCode=true`) or pairing code. A connect during a pairing answers that pairing's current code.",
    rateLimit: r.connect,
    query: connectQuerySchema,
    success: {
      status: 200,
      schema: 'ConnectResult',
      description: 'Pairing started, joined, or already connected.',
    },
    errors: [409, 502, 503, 504],
  };
  return {
    '/connect': {
      get: operation(connect),
      post: operation({ ...connect, errors: [...connect.errors, 413] }),
    },
    '/disconnect': {
      post: operation({
        tag: 'Connection',
        summary: 'Disconnect (log the account out)',
        description:
          'Logs the account out and deletes its credentials; waiting messages end failed (`logged_out`).',
        rateLimit: r.disconnect,
        query: emptyQuerySchema,
        success: { status: 200, schema: 'DisconnectResult', description: 'Logged out, or nothing to do.' },
        errors: [409, 413, 502, 504],
      }),
    },
    '/connect/passkey': {
      get: operation({
        tag: 'Connection',
        summary: 'The passkey request of a link',
        description:
          "An account a passkey guards (docs/passkeys.md): after the QR scan or the pairing code, WhatsApp asks for a WebAuthn assertion. This answers the request (its options, for a browser on a whatsapp.com page: the gateway's browser extension fetches them here), the step the link is at and, from `confirm_code` on, the code the phone shows. 404 when the device's link waits on no passkey.",
        rateLimit: r.status,
        query: emptyQuerySchema,
        success: { status: 200, schema: 'PasskeyRequest', description: 'The pending request.' },
        errors: [404],
      }),
      post: operation({
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
    },
    '/connect/passkey/confirm': {
      post: operation({
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
    },
    '/status': {
      get: operation({
        tag: 'Connection',
        summary: 'Connection status',
        description:
          "The device's status; phone, name and picture while connected. Beyond the spec, a linked device also has `sending` (its usage of the sending policy, its pause) and `health` (a score 0-100 with the reasons that cost it points).",
        rateLimit: r.status,
        query: emptyQuerySchema,
        success: { status: 200, schema: 'Status', description: 'The status.' },
        errors: [],
      }),
    },
  };
}

/** The response schemas of a passkey-gated link (docs/passkeys.md). */
export const connectionSchemas: Record<string, JsonSchema> = {
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
