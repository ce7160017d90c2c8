/** Meta's webhook endpoint in the OpenAPI document: written by hand (Meta's parameters, no joi schema of ours). */
import { MAX_NUMBERS_PER_DELIVERY } from './receive-webhook.js';
import { CHALLENGE_PATTERN } from './verify-handshake.js';
import type { Operations } from '../../http/route-table.js';
import { STATUS_TEXT } from '../../openapi/components.js';
import type { JsonSchema } from '../../openapi/joi-schema.js';
import { closed, ref } from '../../openapi/schema-helpers.js';
import type { CloudWebhookName } from './mount.js';

export const cloudWebhookSchemas: Record<string, JsonSchema> = {
  CloudWebhookReceived: closed({ success: { const: true } }, ['success']),
};

const error = (status: number, description = STATUS_TEXT[status]!) => ({
  [status]: { description, content: { 'application/json': { schema: ref('Error') } } },
});

const hub = (name: string, description: string, schema: JsonSchema) => ({
  name: `hub.${name}`,
  in: 'query',
  required: true,
  description,
  schema,
});

export function cloudWebhookOperations(): Operations<CloudWebhookName> {
  return {
    handshake: {
      tags: ['Cloud API'],
      summary: "Meta's webhook verification",
      description:
        'Meta subscribes the endpoint with `hub.mode=subscribe`, a cloud device’s verify token and a challenge, and expects the challenge back as plain text. Any other request is refused with 403.',
      security: [],
      parameters: [
        hub('mode', 'Always `subscribe`.', { const: 'subscribe' }),
        hub('verify_token', 'The verify token of a cloud device of the install.', {
          type: 'string',
          minLength: 1,
          maxLength: 256,
        }),
        hub('challenge', 'What to answer.', { type: 'string', pattern: CHALLENGE_PATTERN.source }),
      ],
      responses: {
        200: {
          description: 'The challenge, as it came',
          content: { 'text/plain': { schema: { type: 'string', pattern: CHALLENGE_PATTERN.source } } },
        },
        ...error(403, 'Not a subscription with a cloud device’s verify token'),
      },
    },
    receive: {
      tags: ['Cloud API'],
      summary: "Meta's webhook events",
      description:
        'Statuses and messages of the install’s Cloud API numbers (`whatsapp_business_account` JSON, at most 1 MB), signed with `X-Hub-Signature-256` by the app of each number it names. A body naming a number no cloud device is, a replay, or events older than 24 h are answered 200 and change nothing (Meta retries anything else for days).',
      security: [],
      parameters: [
        {
          name: 'X-Hub-Signature-256',
          in: 'header',
          required: true,
          description: '`sha256=` and the hex HMAC-SHA256 of the raw body with the app secret.',
          schema: { type: 'string', pattern: '^sha256=[0-9a-fA-F]{64}$' },
        },
      ],
      requestBody: {
        required: true,
        content: { 'application/json': { schema: { type: 'object' } } },
      },
      responses: {
        200: {
          description: 'Taken (applied, or dropped as a replay, stale or of no cloud device)',
          content: { 'application/json': { schema: ref('CloudWebhookReceived') } },
        },
        ...error(
          400,
          `Not the whatsapp_business_account JSON, or naming over ${MAX_NUMBERS_PER_DELIVERY} numbers`,
        ),
        ...error(401, 'The signature is not the app secret’s of each number the body names'),
        ...error(413),
      },
    },
  };
}
