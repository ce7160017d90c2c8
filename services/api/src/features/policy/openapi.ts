/** A device's sending policy in the admin document (admin.ts). */
import { emptyQuerySchema } from '@mgw/contracts';
import type { ApiConfig } from '../../config.js';
import type { AdminOperationSpec } from '../../openapi/admin-operation.js';
import type { JsonSchema } from '../../openapi/joi-schema.js';
import { closed, int, ref, str } from '../../openapi/schema-helpers.js';
import type { PolicyAdminName } from './admin.js';

const yes = { const: true } as const;

const overrideProperties: Record<string, JsonSchema> = {
  dailyCap: int('Messages per window.'),
  warmupCaps: {
    type: 'array',
    items: { type: 'integer', minimum: 0 },
    description: 'The warm-up caps per day.',
  },
  firstContactCap: int('First contacts per window.'),
  otpReserve: { type: 'number', description: 'Share of each cap only OTPs may use.' },
  quietHours: str('start-end, in the device time zone.'),
  timeZone: str('IANA.'),
  sendGapMs: int('Milliseconds between two messages.'),
  typing: { type: 'boolean', description: '"typing…" before a paced text.' },
};

const policyProperties: Record<string, JsonSchema> = {
  success: yes,
  deviceId: str('The device.'),
  overrides: closed(overrideProperties, []),
  sending: { ...ref('AdminSending'), description: 'What is in force now, with its usage.' },
};

const policy = closed(policyProperties, ['success', 'deviceId', 'overrides', 'sending']);

export function policyAdminOperations(
  _config: ApiConfig,
  op: (spec: AdminOperationSpec) => JsonSchema,
): Record<PolicyAdminName, JsonSchema> {
  const tag = 'Sending' as const;
  return {
    getPolicy: op({
      tag,
      summary: "The device's sending policy",
      description: 'Its overrides (what differs from the defaults) and what is in force now, with its usage.',
      query: emptyQuerySchema,
      success: { status: 200, schema: policy, description: 'The policy.' },
      errors: [],
    }),
    putPolicy: op({
      tag,
      summary: "Change the device's sending policy",
      description:
        'Overrides some fields (null removes an override; `restartWarmup` restarts or ends the warm-up).',
      query: emptyQuerySchema,
      // @mgw/store's schema (policyOverrideSchema) checks fields with rules joi cannot describe.
      body: {
        ...closed(
          {
            ...Object.fromEntries(
              Object.entries(overrideProperties).map(([name, schema]) => [
                name,
                { anyOf: [schema, { type: 'null' }] },
              ]),
            ),
            restartWarmup: { type: 'boolean', description: 'true: restart the warm-up now; false: end it.' },
          },
          [],
        ),
        minProperties: 1,
      },
      success: { status: 200, schema: policy, description: 'The policy.' },
      errors: [],
    }),
    clearRestriction: op({
      tag,
      summary: "End the device's pause",
      description: 'Ends the pause WhatsApp caused now; `cleared`: whether it was paused.',
      query: emptyQuerySchema,
      success: {
        status: 200,
        schema: closed({ ...policyProperties, cleared: { type: 'boolean' } }, [
          'success',
          'deviceId',
          'overrides',
          'sending',
          'cleared',
        ]),
        description: 'The policy.',
      },
      errors: [],
    }),
  };
}
