/** The account routes and their answers in the OpenAPI document (see docs/account.md). */
import {
  ACCOUNT_ERRORS,
  BLOCKLIST_MAX,
  CONTACT_PRESENCES,
  PRESENCE_STATES,
  PROFILE_LIMITS,
  blockBodySchema,
  emptyQuerySchema,
  presenceBodySchema,
  profileBodySchema,
  profilePhotoBodySchema,
} from '@mgw/contracts';
import type { Operations } from '../../http/route-table.js';
import type { OperationSpec } from '../../openapi/operation.js';
import { closed, ref, result, str, timestamp } from '../../openapi/schema-helpers.js';
import type { AccountName } from './mount.js';
import type { ApiConfig } from '../../config.js';
import type { AdminOperationSpec } from '../../openapi/admin-operation.js';
import type { JsonSchema } from '../../openapi/joi-schema.js';
import type { AccountAdminName } from './admin.js';

export const accountSchemas: Record<string, JsonSchema> = {
  AccountProfile: closed(
    {
      phone: str("The account's phone number (digits)."),
      name: str('The push name contacts see.'),
      about: str('The "about" text.'),
      pictureUrl: str("The profile photo on WhatsApp's CDN (the URL expires)."),
    },
    ['phone'],
  ),
  AccountProfileResult: result(closed({ profile: ref('AccountProfile') }, ['profile'])),
  BusinessProfile: closed(
    {
      description: str('What the business says of itself.'),
      category: str('Its category.'),
      email: str('Its e-mail address.'),
      website: { type: 'array', items: { type: 'string' }, description: 'Its websites.' },
      address: str('Its address.'),
    },
    [],
  ),
  ContactProfileResult: result(
    closed(
      {
        profile: closed(
          {
            contact: ref('ContactIdentity'),
            about: str('The contact\'s "about" (absent when none is set or its privacy hides it).'),
            aboutSetAt: { type: 'string', format: 'date-time', description: 'When the about was set.' },
            pictureUrl: str('Its profile photo (absent when none, or hidden from this account).'),
            business: ref('BusinessProfile'),
          },
          ['contact'],
        ),
      },
      ['profile'],
    ),
  ),
  PresenceResult: result(closed({ presence: { enum: [...PRESENCE_STATES] } }, ['presence'])),
  PresenceSubscribed: result(
    closed({ subscribed: { const: true }, contact: ref('ContactIdentity') }, ['subscribed', 'contact']),
  ),
  Blocklist: result(
    closed(
      {
        total: { type: 'integer', minimum: 0, maximum: BLOCKLIST_MAX },
        contacts: { type: 'array', items: ref('ContactIdentity') },
      },
      ['total', 'contacts'],
    ),
  ),
  BlockResult: result(
    closed({ blocked: { type: 'boolean' }, contact: ref('ContactIdentity') }, ['blocked', 'contact']),
  ),
  PresenceEvent: closed(
    {
      deviceId: { type: 'string' },
      contact: ref('ContactIdentity'),
      presence: { enum: [...CONTACT_PRESENCES] },
      lastSeen: { type: 'string', format: 'date-time' },
      chat: closed({ type: { const: 'group' }, id: { type: 'string' } }, ['type', 'id']),
      at: { type: 'string', format: 'date-time' },
    },
    ['deviceId', 'contact', 'presence', 'at'],
  ),
};

const numberParam = (description: string) => ({
  name: 'number',
  in: 'path',
  required: true,
  description,
  schema: { type: 'string', pattern: '^(\\d{7,15}|\\d{5,24}@lid)$' },
});

const HOLDER =
  "Asked of the sender holding the device and, through it, of WhatsApp (a device command: one round trip to the holder, then WhatsApp's own), so it costs more than a read of Redis such as GET /status. 409 when the device is not connected; 502 when WhatsApp refused or failed; 504 when no answer came in time.";
const PROTECTION =
  "**Choice (account protection):** a number the device's contact cache does not know costs one WhatsApp lookup, counted against the number check's daily cap (`CONTACT_LOOKUPS_PER_DAY`): 429 with `resetIn` past it. 404 when the number is not on WhatsApp (or a LID the device never met).";

/** Each public account route's operation, by its handler's name (mount.ts). */
export function accountOperations(
  config: ApiConfig,
  operation: (spec: OperationSpec) => JsonSchema,
): Operations<AccountName> {
  const base = { tag: 'Account' as const, rateLimit: config.rateLimits.account, query: emptyQuerySchema };
  const withNumber = (op: JsonSchema, description: string) => {
    const o = op as { parameters?: JsonSchema[] };
    o.parameters = [numberParam(description), ...(o.parameters ?? [])];
    return op;
  };
  const profileOk = { status: 200, schema: 'AccountProfileResult', description: 'The profile now.' };
  return {
    getProfile: operation({
      ...base,
      summary: "The account's profile",
      description: ['Name, "about" and photo URL, as contacts see them.', HOLDER].join('\n\n'),
      success: profileOk,
      errors: [409, 502, 504],
    }),
    patchProfile: operation({
      ...base,
      summary: 'Change the name and/or the "about"',
      description: [
        `\`name\` (1-${PROFILE_LIMITS.name} characters, the push name contacts see) and/or \`about\` (up to ${PROFILE_LIMITS.about} characters; empty clears it). GET /status shows the new name.`,
        "**Choice:** the name goes to WhatsApp as the linked device's presence name (what WhatsApp Web sends when its name setting changes); the phone's own copy of the setting is an app-state patch this gateway does not write (docs/account.md).",
        HOLDER,
      ].join('\n\n'),
      body: profileBodySchema,
      success: profileOk,
      errors: [409, 413, 502, 504],
    }),
    putPhoto: operation({
      ...base,
      summary: 'Set the profile photo',
      description: [
        `The photo as \`url\` (fetched by the device's holder through the guarded outbound client: private addresses refused) or \`base64\`; a JPEG, PNG or WebP image of at most ${PROFILE_LIMITS.photoBytes / 1024 / 1024} MB (400 \`${ACCOUNT_ERRORS.photoNotImage}\` naming the field otherwise, 413 when larger; 422 when the URL cannot be fetched). WhatsApp shows it as a 640×640 JPEG. GET /status shows the new \`profilePic\`.`,
        HOLDER,
      ].join('\n\n'),
      body: profilePhotoBodySchema,
      success: profileOk,
      errors: [409, 413, 422, 502, 504],
    }),
    deletePhoto: operation({
      ...base,
      summary: 'Remove the profile photo',
      description: ['GET /status then has no `profilePic`.', HOLDER].join('\n\n'),
      success: profileOk,
      errors: [409, 502, 504],
    }),
    putPresence: operation({
      ...base,
      summary: 'Set the account available or unavailable',
      description: [
        '`available`: contacts see the account online (and, as with WhatsApp Web, the phone gets no notifications meanwhile); `unavailable`: offline, with its last seen. The gateway starts every connection unavailable. 409 when the account has no name yet (WhatsApp ignores a nameless presence).',
        HOLDER,
      ].join('\n\n'),
      body: presenceBodySchema,
      success: { status: 200, schema: 'PresenceResult', description: 'Sent.' },
      errors: [409, 413, 502, 504],
    }),
    contactProfile: withNumber(
      operation({
        ...base,
        summary: "A contact's profile",
        description: [
          'Its "about", photo URL and, for a business account, its business profile — what its privacy settings let this account see.',
          PROTECTION,
          HOLDER,
        ].join('\n\n'),
        success: { status: 200, schema: 'ContactProfileResult', description: 'The profile.' },
        errors: [404, 409, 502, 504],
      }),
      'A phone number (digits) or a LID (`<digits>@lid`).',
    ),
    subscribePresence: withNumber(
      operation({
        ...base,
        summary: "Subscribe to a contact's presence",
        description: [
          "From now on, while the device's connection lasts, the contact's presence comes as `presence.update` events: online, offline (with its last seen when it shares it), typing or recording. WhatsApp ends subscriptions with the connection: subscribe again after a reconnect.",
          PROTECTION,
          HOLDER,
        ].join('\n\n'),
        success: { status: 200, schema: 'PresenceSubscribed', description: 'Subscribed.' },
        errors: [404, 409, 413, 502, 504],
      }),
      'A phone number (digits) or a LID (`<digits>@lid`).',
    ),
    getBlocklist: operation({
      ...base,
      summary: "The account's blocklist",
      description: `Every contact the account blocked (phone and LID as far as the device knows them; WhatsApp names blocked contacts by LID). **Choice:** read from Redis, where the device's holder keeps it (replaced from WhatsApp at every connect, changed by blocks and WhatsApp's pushes; at most ${BLOCKLIST_MAX}): the same cost as GET /status, no WhatsApp query. 409 when no device is linked.`,
      success: { status: 200, schema: 'Blocklist', description: 'The blocked contacts.' },
      errors: [409],
    }),
    block: operation({
      ...base,
      summary: 'Block a contact',
      description: [
        `\`phone\`: a phone number or a LID. A message to a blocked number is then refused: a single \`to\` with 422 \`${ACCOUNT_ERRORS.recipientBlocked}\` before it is queued; in a list each blocked recipient fails \`recipient_blocked\` unsent (as opted-out ones do).`,
        PROTECTION,
        HOLDER,
      ].join('\n\n'),
      body: blockBodySchema,
      success: { status: 200, schema: 'BlockResult', description: 'Blocked.' },
      errors: [404, 409, 413, 502, 504],
    }),
    unblock: withNumber(
      operation({
        ...base,
        summary: 'Unblock a contact',
        description: [PROTECTION, HOLDER].join('\n\n'),
        success: { status: 200, schema: 'BlockResult', description: 'Unblocked.' },
        errors: [404, 409, 502, 504],
      }),
      'A phone number (digits) or a LID (`<digits>@lid`).',
    ),
  };
}

// --- The account's admin routes in the admin document (admin.ts): the presence read.

const yes = { const: true } as const;

export function accountAdminOperations(
  _config: ApiConfig,
  op: (spec: AdminOperationSpec) => JsonSchema,
): Partial<Record<AccountAdminName, JsonSchema>> {
  return {
    adminGetPresence: op({
      tag: 'Account',
      summary: "The account's presence",
      description:
        'What PUT …/presence last set while the device is connected (and when); `unavailable` otherwise.',
      query: emptyQuerySchema,
      success: {
        status: 200,
        schema: closed(
          {
            success: yes,
            data: closed(
              {
                presence: { enum: [...PRESENCE_STATES] },
                setAt: timestamp('When it was set.'),
              },
              ['presence'],
            ),
          },
          ['success', 'data'],
        ),
        description: 'The presence.',
      },
      errors: [],
    }),
  };
}
