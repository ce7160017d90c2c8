/** A device's suppression list and opt-out settings in the admin document (admin.ts). */
import { emptyQuerySchema } from '@mgw/contracts';
import type { ApiConfig } from '../../config.js';
import type { AdminOperationSpec } from '../../openapi/admin-operation.js';
import type { JsonSchema } from '../../openapi/joi-schema.js';
import { closed, int, ref, str, timestamp } from '../../openapi/schema-helpers.js';
import { addBodySchema, listQuerySchema, type OptOutAdminName } from './admin.js';

const yes = { const: true } as const;

const settingsProperties: Record<string, JsonSchema> = {
  optOutKeywords: {
    type: 'array',
    items: { type: 'string' },
    description: 'Whole messages that opt a contact out.',
  },
  optInKeywords: {
    type: 'array',
    items: { type: 'string' },
    description: 'Whole messages that take it off the list.',
  },
  confirmation: { type: 'boolean', description: 'Whether the contact gets a confirmation message.' },
  optOutTextEn: str('The opt-out confirmation (English).'),
  optOutTextAr: str('The opt-out confirmation (Arabic).'),
  optInTextEn: str('The opt-in confirmation (English).'),
  optInTextAr: str('The opt-in confirmation (Arabic).'),
};

export const optOutAdminSchemas: Record<string, JsonSchema> = {
  AdminOptOutSettings: closed(
    {
      settings: closed(settingsProperties, Object.keys(settingsProperties)),
      overrides: { ...closed(settingsProperties, []), description: 'Which of them the operator changed.' },
    },
    ['settings', 'overrides'],
  ),
  AdminOptOutChange: closed(
    {
      phone: str('The entry: a phone number, or a `<digits>@lid`.'),
      optedOut: { type: 'boolean', description: 'Whether it is on the list now.' },
      changed: { type: 'boolean', description: 'Whether this call changed that.' },
    },
    ['phone', 'optedOut', 'changed'],
  ),
};

const data = (schema: JsonSchema) => closed({ success: yes, data: schema }, ['success', 'data']);

export function optOutAdminOperations(
  _config: ApiConfig,
  op: (spec: AdminOperationSpec) => JsonSchema,
): Record<OptOutAdminName, JsonSchema> {
  const tag = 'Sending' as const;
  return {
    listOptOuts: op({
      tag,
      summary: "The device's suppression list",
      description: 'Numbers that opted out, newest first.',
      query: listQuerySchema,
      success: {
        status: 200,
        schema: data(
          closed(
            {
              total: int('Entries of the list.'),
              numbers: {
                type: 'array',
                items: closed(
                  {
                    phone: str('The entry: the phone number, or the `<digits>@lid` it opted out by.'),
                    contact: ref('ContactIdentity'),
                    optedOutAt: timestamp('When.'),
                  },
                  ['phone', 'contact', 'optedOutAt'],
                ),
              },
              nextCursor: str('The `cursor` of the next page; absent on the last one.'),
            },
            ['total', 'numbers'],
          ),
        ),
        description: 'A page of the list.',
      },
      errors: [],
    }),
    addOptOut: op({
      tag,
      summary: 'Suppress a contact',
      description: 'Puts the contact on the list (as its own opt-out would).',
      query: emptyQuerySchema,
      body: addBodySchema,
      success: { status: 200, schema: data(ref('AdminOptOutChange')), description: 'The entry.' },
      errors: [],
    }),
    removeOptOut: op({
      tag,
      summary: 'Take a contact off the list',
      description: 'By either identity (idempotent).',
      query: emptyQuerySchema,
      success: { status: 200, schema: data(ref('AdminOptOutChange')), description: 'The entry.' },
      errors: [],
    }),
    getOptOutSettings: op({
      tag,
      summary: "The device's opt-out settings",
      description: 'The keywords and confirmations in force, and the overrides.',
      query: emptyQuerySchema,
      success: { status: 200, schema: data(ref('AdminOptOutSettings')), description: 'The settings.' },
      errors: [],
    }),
    putOptOutSettings: op({
      tag,
      summary: "Change the device's opt-out settings",
      description: 'Some of them (null: back to the default); a keyword may not both opt out and opt in.',
      query: emptyQuerySchema,
      // @mgw/store's schema (optOutSettingsSchema) checks keywords with a rule joi cannot describe.
      body: {
        ...closed(
          Object.fromEntries(
            Object.entries(settingsProperties).map(([name, schema]) => [
              name,
              { anyOf: [schema, { type: 'null' }] },
            ]),
          ),
          [],
        ),
        minProperties: 1,
      },
      success: { status: 200, schema: data(ref('AdminOptOutSettings')), description: 'The settings.' },
      errors: [],
    }),
  };
}
