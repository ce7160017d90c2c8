/** POST /contacts/check and POST /contacts/username in the OpenAPI document. */
import {
  USERNAME_LIMITS,
  USERNAME_STATUSES,
  contactCheckBodySchema,
  emptyQuerySchema,
  usernameResolveBodySchema,
} from '@mgw/contracts';
import type { ApiConfig } from '../../config.js';
import type { Operations } from '../../http/route-table.js';
import type { JsonSchema } from '../../openapi/joi-schema.js';
import type { OperationSpec } from '../../openapi/operation.js';
import { closed, ref, result, str } from '../../openapi/schema-helpers.js';
import type { ContactName } from './mount.js';

export const contactSchemas: Record<string, JsonSchema> = {
  ContactCheck: closed(
    {
      phone: str('The number as asked.'),
      onWhatsApp: { type: 'boolean', description: 'Whether the number has a WhatsApp account.' },
      lid: str("The number's LID (`…@lid`), when WhatsApp gave it: a send to the number goes to it."),
      phoneJid: str(
        'The phone JID WhatsApp knows the number by (`<digits>@s.whatsapp.net`, its `pn_jid`), when on WhatsApp: it may differ from the number asked (a country whose numbers WhatsApp rewrites).',
      ),
    },
    ['phone', 'onWhatsApp'],
  ),
  ContactCheckResult: result(
    closed(
      {
        results: {
          type: 'array',
          items: ref('ContactCheck'),
          description: "One answer per number, in the request's order.",
        },
      },
      ['results'],
    ),
  ),
  UsernameResolution: result(
    closed(
      {
        username: {
          type: 'string',
          minLength: USERNAME_LIMITS.minLength,
          maxLength: USERNAME_LIMITS.maxLength,
          description: 'The username asked, as WhatsApp knows it: lower case, without `@`.',
        },
        status: {
          enum: [...USERNAME_STATUSES],
          description:
            '`found`: an account has it (see `contact`); `pin_required`: it is guarded by a 4-digit key and none, or a wrong one, was given; `not_found`: no account has it.',
        },
        contact: {
          ...ref('ContactIdentity'),
          description:
            'When found: its LID (usable as `to`, as is `@username`), its phone when WhatsApp tells it, and the username.',
        },
      },
      ['username', 'status'],
    ),
  ),
};

/** Each public contact route's operation, by its handler's name (mount.ts). */
export function contactOperations(
  config: ApiConfig,
  operation: (spec: OperationSpec) => JsonSchema,
): Operations<ContactName> {
  const lookupCap = `**Choice:** at most ${config.contactCheck.lookupsPerDay || 'unlimited'} numbers per device per day are looked up (CONTACT_LOOKUPS_PER_DAY; cache hits are free; the day starts with the first lookup)`;
  return {
    check: operation({
      tag: 'Contacts',
      summary: 'Check which numbers are on WhatsApp',
      description: [
        "Answers, for each of 1 to 1,000 numbers (the rules of `to`), whether it is on WhatsApp, in the request's order (a number listed twice is answered twice), with its LID when WhatsApp gave one.",
        `**Choice:** answers come from the device's contact cache (CONTACT_CACHE_TTL_SECONDS, 7 days by default), which sends share: a number known not to be on WhatsApp fails \`not_on_whatsapp\` without a lookup. The numbers not cached are looked up by the sender holding the device in queries of ${config.contactCheck.batchSize} numbers, ${config.contactCheck.pauseMs} ms apart, so a long check takes a while (about 20 s for 1,000 numbers by default).`,
        `${lookupCap}: a check whose uncached numbers would pass it is refused whole with 429 \`Rate limit exceeded\` and \`resetIn\`.`,
        "409 when the device is not connected; 502 when WhatsApp's lookup failed; 504 when it did not finish in time (retrying is cheap: what was looked up is cached).",
      ].join('\n\n'),
      rateLimit: config.rateLimits.contacts,
      query: emptyQuerySchema,
      body: contactCheckBodySchema,
      success: {
        status: 200,
        schema: 'ContactCheckResult',
        description: 'One answer per number, in order.',
      },
      errors: [409, 413, 502, 504],
    }),
    username: operation({
      tag: 'Contacts',
      summary: 'Resolve a WhatsApp username',
      description: [
        'Who has a WhatsApp username (`@alice.shop`, the `@` optional), asked of WhatsApp now: `found` with the contact (its LID, usable as `to`), `pin_required` when the username is guarded by a 4-digit key and `pin` was not given or is wrong, or `not_found`. See docs/usernames.md.',
        "A username must follow WhatsApp's rules (3 to 35 of a-z, 0-9, `_` and `.`, a letter, no period first, last or twice in a row, not `www.` first, no domain ending such as `.com`, no `whatsapp`, `instagram`, `facebook` or `oculus`): anything else is 400 with the rule it breaks. It is taken in any case and asked in lower case, as WhatsApp's usernames are.",
        '**Choice:** a found username is remembered by the device (its phone <-> LID map: bounded, deleted with the device\'s credentials; the PIN is never kept), so `POST /send` may name it as `to: "@alice.shop"` — a username guarded by a PIN must be resolved here with its PIN first. A username no account has any more is forgotten.',
        `${lookupCap}: each resolution is one lookup; over the cap, 429 \`Rate limit exceeded\` with \`resetIn\`.`,
        "409 when the device is not connected; 502 when WhatsApp's lookup failed; 504 when it did not finish in time.",
      ].join('\n\n'),
      rateLimit: config.rateLimits.contacts,
      query: emptyQuerySchema,
      body: usernameResolveBodySchema,
      success: {
        status: 200,
        schema: 'UsernameResolution',
        description: 'What WhatsApp said of the username.',
      },
      errors: [409, 413, 502, 504],
    }),
  };
}
