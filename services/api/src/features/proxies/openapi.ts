/** A device's proxy in the admin document (admin.ts). */
import { emptyQuerySchema } from '@mgw/contracts';
import type { ApiConfig } from '../../config.js';
import type { AdminOperationSpec } from '../../openapi/admin-operation.js';
import type { JsonSchema } from '../../openapi/joi-schema.js';
import { closed, int, ref, str, timestamp } from '../../openapi/schema-helpers.js';
import { PROXY_REMOVED, proxyBodySchema, type ProxyAdminName } from './admin.js';

const yes = { const: true } as const;

const applied = {
  enum: ['reconnecting', 'not-connected', 'unknown'],
  description:
    '`reconnecting`: its sender reconnects through the new setting; `not-connected`: its next connection uses it; `unknown`: the sender did not answer.',
};

export const proxyAdminSchemas: Record<string, JsonSchema> = {
  AdminDeviceProxy: {
    description: "A device's own setting: a proxy (where it is, never its credentials), or directly.",
    oneOf: [
      closed(
        {
          url: str('`scheme://host:port`, without credentials.'),
          scheme: { enum: ['http', 'socks5'] },
          host: str('The host.'),
          port: int('The port.'),
          hasCredentials: { type: 'boolean' },
          updatedAt: timestamp('When it was set.'),
        },
        ['url', 'scheme', 'host', 'port', 'hasCredentials', 'updatedAt'],
      ),
      closed({ direct: { const: true }, updatedAt: timestamp('When it was set.') }, ['direct', 'updatedAt']),
    ],
  },
};

export function proxyAdminOperations(
  _config: ApiConfig,
  op: (spec: AdminOperationSpec) => JsonSchema,
): Record<ProxyAdminName, JsonSchema> {
  const tag = 'Sending' as const;
  return {
    getProxy: op({
      tag,
      summary: "The device's proxy",
      description: 'Its own setting; 404 when it has none.',
      query: emptyQuerySchema,
      success: {
        status: 200,
        schema: closed({ success: yes, data: ref('AdminDeviceProxy') }, ['success', 'data']),
        description: 'The setting.',
      },
      errors: [],
    }),
    putProxy: op({
      tag,
      summary: "Set the device's proxy",
      description: '`{ url }` (sealed at rest, never echoed) or `{ direct: true }`; its sender reconnects.',
      query: emptyQuerySchema,
      body: proxyBodySchema,
      success: {
        status: 200,
        schema: closed({ success: yes, data: ref('AdminDeviceProxy'), applied }, [
          'success',
          'data',
          'applied',
        ]),
        description: 'The setting.',
      },
      errors: [],
    }),
    deleteProxy: op({
      tag,
      summary: "Remove the device's proxy",
      description: 'It connects directly again (or through DEVICE_PROXY_URL); 404 when it had none.',
      query: emptyQuerySchema,
      success: {
        status: 200,
        schema: closed({ success: yes, message: { const: PROXY_REMOVED }, applied }, [
          'success',
          'message',
          'applied',
        ]),
        description: 'Removed.',
      },
      errors: [],
    }),
  };
}
