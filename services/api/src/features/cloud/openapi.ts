/** A device's Cloud API configuration in the OpenAPI document (mount.ts; docs/cloud-api.md). */
import {
  CONNECTION_MESSAGES,
  MAX_CLOUD_THROUGHPUT_PER_SECOND,
  cloudDeviceBodySchema,
  cloudTemplatesQuerySchema,
  emptyQuerySchema,
} from '@mgw/contracts';
import type { ApiConfig } from '../../config.js';
import type { Operations } from '../../http/route-table.js';
import type { JsonSchema } from '../../openapi/joi-schema.js';
import type { OperationSpec } from '../../openapi/operation.js';
import { closed, int, ref, result, str, timestamp } from '../../openapi/schema-helpers.js';
import type { CloudName } from './mount.js';

/** Each route's operation, by its handler's name (mount.ts). */
export function cloudOperations(
  config: ApiConfig,
  operation: (spec: OperationSpec) => JsonSchema,
): Operations<CloudName> {
  const r = config.rateLimits;
  return {
    putCloud: operation({
      tag: 'Connection',
      summary: 'Make the device a Cloud API number',
      description:
        "The device becomes a phone number of WhatsApp's Cloud API (Meta's Graph API) instead of a device linked by QR or pairing code. The credentials are checked with the Graph API first (`GET /{phone-number-id}`), then stored sealed; the access token, app secret and verify token are never shown again. Then `/connect` connects it. 409 when the device is linked by QR or code (or a pairing runs: disconnect it first) or another device already is this number; 422 when Meta refused the credentials (`details` say what Meta said); 502 when the Graph API could not be reached.",
      rateLimit: r.connect,
      query: emptyQuerySchema,
      body: cloudDeviceBodySchema,
      success: {
        status: 200,
        schema: 'CloudDeviceAnswer',
        description: 'Stored: the configuration, without its secrets.',
      },
      errors: [409, 413, 422, 502],
    }),
    getCloud: operation({
      tag: 'Connection',
      summary: "The device's Cloud API configuration",
      description:
        'The configuration without its secrets, what the number said of itself when last checked, and whether the device is connected. 404 when the device is not a Cloud API number (it is linked by QR or code, or not configured).',
      rateLimit: r.status,
      query: emptyQuerySchema,
      success: { status: 200, schema: 'CloudDeviceAnswer', description: 'The configuration.' },
      errors: [404],
    }),
    deleteCloud: operation({
      tag: 'Connection',
      summary: "Forget the device's Cloud API configuration",
      description:
        'As `/disconnect` does for a Cloud API device: the configuration and its secrets are deleted and the device leaves the senders; it is a device without an engine until it is configured or linked again. 404 when it is not a Cloud API number.',
      rateLimit: r.connect,
      query: emptyQuerySchema,
      success: { status: 200, schema: 'CloudForgotten', description: 'Forgotten.' },
      errors: [404, 413],
    }),
    getCloudTemplates: operation({
      tag: 'Messages',
      summary: "The Cloud API number's message templates",
      description:
        "The templates of the number's WhatsApp Business Account, as `/send` checks a `template` against them: each with its status, its category, the parameters `/send` must give it, and its components as shown (header, body and footer text with their placeholders, buttons). The list is read from the Graph API (`GET /{waba-id}/message_templates`) and kept 10 minutes, shared with `/send`'s check; `fetchedAt` says when it was read. `refresh=true` reads it again when the kept list is at least 30 seconds old (younger, the kept list is answered: no stream of Graph calls); a refresh Meta does not answer answers the kept list. `name`, `language` and `status` keep the templates that have exactly that value (a status in any letter case). 404 when the device is not a Cloud API number; 422 when Meta refused the token (`details` say what Meta said: the token needs `whatsapp_business_management`); 502 when the Graph API could not be reached and no list was kept.",
      rateLimit: r.status,
      query: cloudTemplatesQuerySchema,
      success: { status: 200, schema: 'CloudTemplatesAnswer', description: 'The templates.' },
      errors: [404, 422, 502],
    }),
  };
}

/** The answers of the cloud routes. */
export const cloudSchemas: Record<string, JsonSchema> = {
  CloudNumberProfile: closed(
    {
      displayPhoneNumber: str(
        'The number as Meta displays it (`display_phone_number`, e.g. `+1 555-010-0001`).',
      ),
      verifiedName: str('The business name Meta verified (`verified_name`).'),
      qualityRating: str('`GREEN`, `YELLOW`, `RED` or `UNKNOWN` (`quality_rating`).'),
      messagingLimitTier: str(
        'The unique contacts it may start conversations with per 24 h: `TIER_50` … `TIER_UNLIMITED` (`messaging_limit_tier`; absent when Meta says none).',
      ),
      checkedAt: timestamp('When the Graph API said so (PUT /cloud, /connect).'),
    },
    ['displayPhoneNumber', 'verifiedName', 'qualityRating', 'checkedAt'],
  ),
  CloudDevice: closed(
    {
      engine: { const: 'cloud' },
      phoneNumberId: str("The number's phone-number id at Meta."),
      wabaId: str('The WhatsApp Business Account id.'),
      throughputPerSecond: {
        type: 'integer',
        minimum: 1,
        maximum: MAX_CLOUD_THROUGHPUT_PER_SECOND,
        description: 'Messages a second it may send.',
      },
      graphVersion: str('The Graph API version it is spoken to in (`v21.0`).'),
      otpTemplate: str('The authentication template `/otp` sends.'),
      updatedAt: timestamp('When it was configured.'),
      profile: ref('CloudNumberProfile'),
      status: { enum: ['connected', 'disconnected'] },
      reason: str('Disconnected after a failure: why (`cloud_token_expired`, `number_blocked`, …).'),
    },
    [
      'engine',
      'phoneNumberId',
      'wabaId',
      'throughputPerSecond',
      'graphVersion',
      'otpTemplate',
      'updatedAt',
      'status',
    ],
  ),
  CloudDeviceAnswer: result(ref('CloudDevice')),
  CloudTemplateButton: closed(
    {
      type: str('`QUICK_REPLY`, `URL`, `PHONE_NUMBER`, `OTP`, `COPY_CODE`, `FLOW`… as Meta says.'),
      text: str("The button's label."),
      url: str("A URL button's address; its `{{1}}` is the parameter `/send` gives."),
      phoneNumber: str("A phone-number button's number."),
      otpType: str("An OTP button's kind: `COPY_CODE`, `ONE_TAP`, `ZERO_TAP`."),
    },
    ['type'],
  ),
  CloudTemplateComponent: closed(
    {
      type: { enum: ['HEADER', 'BODY', 'FOOTER', 'BUTTONS'] },
      format: str("A header's: `TEXT`, `IMAGE`, `VIDEO`, `DOCUMENT` or `LOCATION`."),
      text: str('The text as written, placeholders (`{{1}}`, `{{first_name}}`) and all.'),
      buttons: { type: 'array', items: ref('CloudTemplateButton') },
    },
    ['type'],
  ),
  CloudTemplate: closed(
    {
      name: str("The template's name: what `/send` names in `template.name`."),
      language: str('Its language code (`en_US`, `ar`): `template.language`.'),
      status: str('`APPROVED` (it may be sent), `PENDING`, `REJECTED`, `PAUSED`, `DISABLED`… as Meta says.'),
      category: str('`AUTHENTICATION`, `MARKETING` or `UTILITY`.'),
      parameters: closed(
        {
          header: int("The header's parameters (its placeholders; 1 for a media header)."),
          body: int("The body's parameters (its distinct placeholders)."),
          buttons: {
            type: 'object',
            description:
              'Each button\'s parameters, by the button\'s index (`{"0": 1}`): a URL with a placeholder, a code to copy.',
            propertyNames: { pattern: '^[0-9]+$' },
            additionalProperties: { type: 'integer', minimum: 0 },
          },
        },
        [],
      ),
      components: { type: 'array', items: ref('CloudTemplateComponent') },
    },
    ['name', 'language', 'status', 'category', 'parameters', 'components'],
  ),
  CloudTemplates: closed(
    {
      templates: { type: 'array', items: ref('CloudTemplate') },
      fetchedAt: timestamp('When the list was read from the Graph API.'),
    },
    ['templates', 'fetchedAt'],
  ),
  CloudTemplatesAnswer: result(ref('CloudTemplates')),
  CloudForgotten: closed(
    { success: { const: true }, message: { const: CONNECTION_MESSAGES.cloudForgotten } },
    ['success', 'message'],
  ),
};
