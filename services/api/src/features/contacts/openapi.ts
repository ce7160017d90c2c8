/** POST /contacts/check in the OpenAPI document. */
import { contactCheckBodySchema, emptyQuerySchema } from '@mgw/contracts';
import type { ApiConfig } from '../../config.js';
import type { JsonSchema } from '../../openapi/joi-schema.js';
import type { OperationSpec } from '../../openapi/operation.js';

export function contactPaths(config: ApiConfig, operation: (spec: OperationSpec) => JsonSchema) {
  return {
    '/contacts/check': {
      post: operation({
        tag: 'Contacts',
        summary: 'Check which numbers are on WhatsApp',
        description: [
          "Answers, for each of 1 to 1,000 numbers (the rules of `to`), whether it is on WhatsApp, in the request's order (a number listed twice is answered twice), with its LID when WhatsApp gave one.",
          `**Choice:** answers come from the device's contact cache (CONTACT_CACHE_TTL_SECONDS, 7 days by default), which sends share: a number known not to be on WhatsApp fails \`not_on_whatsapp\` without a lookup. The numbers not cached are looked up by the sender holding the device in queries of ${config.contactCheck.batchSize} numbers, ${config.contactCheck.pauseMs} ms apart, so a long check takes a while (about 20 s for 1,000 numbers by default).`,
          `**Choice:** at most ${config.contactCheck.lookupsPerDay || 'unlimited'} numbers per device per day are looked up (CONTACT_LOOKUPS_PER_DAY; cache hits are free; the day starts with the first lookup): a check whose uncached numbers would pass it is refused whole with 429 \`Rate limit exceeded\` and \`resetIn\`.`,
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
    },
  };
}
