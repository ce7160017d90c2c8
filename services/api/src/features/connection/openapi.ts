/** Linking, status and logout in the OpenAPI document. */
import { connectQuerySchema, emptyQuerySchema } from '@mgw/contracts';
import type { ApiConfig } from '../../config.js';
import type { JsonSchema } from '../../openapi/joi-schema.js';
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
