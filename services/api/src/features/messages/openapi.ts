/** A device's messages, one message, and an inbound message's attachment in the OpenAPI document. */
import {
  FAILURE_REASONS,
  INBOUND_KEEP_ERRORS,
  MESSAGE_STATUSES,
  emptyQuerySchema,
  messagesQuerySchema,
} from '@mgw/contracts';
import type { ApiConfig } from '../../config.js';
import type { Operations } from '../../http/route-table.js';
import type { JsonSchema } from '../../openapi/joi-schema.js';
import { messageDeliveryProperties } from '../../openapi/message-delivery.js';
import { messageKindProperties } from '../../openapi/message-kinds.js';
import { withPathParam, type OperationSpec } from '../../openapi/operation.js';
import { closed, timestamp } from '../../openapi/schema-helpers.js';

/** A string, described when a word is needed. */
const str = (description?: string): JsonSchema => ({
  type: 'string',
  ...(description ? { description } : {}),
});
const yes = { const: true } as const;

/** A message record (GET /messages/{id}, and each of a page), a page of them, and a file. */
export const messageSchemas: Record<string, JsonSchema> = {
  Message: closed(
    {
      messageId: str(),
      deviceId: str(),
      to: str('Outbound: the recipient as the request named it, a phone number or a LID (`<digits>@lid`).'),
      contact: {
        $ref: '#/components/schemas/ContactIdentity',
        description:
          'Who the message is to (outbound) or from (inbound), as far as the device knows: see docs/contacts-and-identities.md.',
      },
      status: { enum: [...MESSAGE_STATUSES, 'received'] },
      kind: { enum: ['send', 'otp'] },
      platformMessageId: str(),
      batchId: str(),
      createdAt: timestamp('Accepted.'),
      sendAt: timestamp(
        'A scheduled send: when it is due. **Choice:** the message reads `scheduled` until then, `queued` from then on.',
      ),
      sentAt: timestamp('Acknowledged by WhatsApp.'),
      deliveredAt: timestamp('Delivery receipt.'),
      readAt: timestamp('Read receipt.'),
      failedAt: timestamp('Failed for good.'),
      error: { type: 'string', description: `Why it failed: ${Object.values(FAILURE_REASONS).join(', ')}.` },
      direction: {
        enum: ['outbound', 'inbound'],
        description:
          '`outbound`: sent by the gateway (with `to`, `kind`); `inbound`: a contact wrote it (status `received`, with `from`).',
      },
      from: str(
        "Inbound: the contact's phone number (digits); absent when it is known only by its LID (`contact.lid`).",
      ),
      text: str(
        "Inbound: the text or caption. An edited text (ours or a contact's): its current text, the last of `edits`. Also an outbound message of the account's history (`history`).",
      ),
      history: {
        type: 'boolean',
        const: true,
        description:
          "A message of the account's history (the device's `historySync` setting): sent or received before the link, recorded from the phone's copy (an outbound one carries `text`, no `kind`).",
      },
      edits: {
        type: 'array',
        items: closed({ text: str(), at: timestamp('When it was edited.') }, ['text', 'at']),
        description:
          'An edited text: its edits, oldest first (POST /send `edit`, or the contact edited it). Sealed at rest like every text.',
      },
      deletedAt: timestamp(
        'Status `deleted`: when it was deleted for everyone (POST /send `delete`; or taken out of the queue unsent), or when the contact deleted it (an inbound message: its text is gone).',
      ),
      attachment: {
        ...closed(
          {
            type: str(),
            mimeType: str(),
            fileName: str(),
            size: { type: 'integer', minimum: 0 },
            mediaId: str('Kept on arrival in the media store (docs/media.md): its id (GET /media/{id}).'),
            url: str('Kept in S3: a pre-signed GET of the file, signed for this answer.'),
            urlExpiresAt: timestamp(
              'When `url` stops working (MEDIA_URL_TTL_SECONDS, at most the retention).',
            ),
            mediaError: {
              enum: [...INBOUND_KEEP_ERRORS],
              description: 'Of a type the device keeps, but not kept: why.',
            },
          },
          ['type', 'mimeType', 'size'],
        ),
        description:
          'Inbound: the attachment (its bytes: GET /messages/{id}/media; or `url` when the device keeps its type in S3).',
      },
      ...messageDeliveryProperties,
      replyTo: str('Inbound: our messageId of the message it quotes.'),
      receivedAt: timestamp('Inbound: when the contact sent it.'),
      ...messageKindProperties,
      mentions: {
        type: 'array',
        items: str(),
        description:
          "The phones or LIDs the text or caption mentioned: ours (POST /send `mentions`, once sent) or a contact's (a group member mentioning others). Sealed at rest.",
      },
      chat: {
        $ref: '#/components/schemas/GroupChat',
        description: 'A group message (inbound): the group. One-to-one messages have none.',
      },
    },
    ['messageId', 'deviceId', 'status', 'direction', 'platformMessageId', 'createdAt'],
  ),
  MessageResult: closed({ success: yes, data: { $ref: '#/components/schemas/Message' } }, [
    'success',
    'data',
  ]),
  Media: { type: 'string', format: 'binary', description: 'The file.' },
  MessagePage: closed(
    {
      success: yes,
      data: closed(
        {
          messages: { type: 'array', items: { $ref: '#/components/schemas/Message' } },
          nextCursor: str('The `cursor` of the next (older) page; absent on the last one.'),
        },
        ['messages'],
      ),
    },
    ['success', 'data'],
  ),
};

export function messageOperations(
  config: ApiConfig,
  operation: (spec: OperationSpec) => JsonSchema,
): Operations<'list' | 'message' | 'media'> {
  const r = config.rateLimits;
  const media = withPathParam(
    operation({
      tag: 'Messages',
      summary: 'The attachment of an inbound message',
      description:
        'Downloaded from WhatsApp when asked (by the sender that owns a linked device; for a Cloud API device, from Meta by the API: docs/media.md) and answered as the file itself, with its MIME type and, for documents, its file name; an attachment kept on arrival comes from the media store. 404 when the message has no attachment; 409 when no sender holds a linked device; 502 when WhatsApp (Meta) did not give it; 504 when the download took too long (over 30 s).',
      rateLimit: r.messages,
      query: emptyQuerySchema,
      success: { status: 200, schema: 'Media', description: 'The file.' },
      errors: [404, 409, 502, 504],
    }),
    'id',
  );
  const mediaOk = (media as { responses: Record<string, { content?: unknown }> }).responses['200']!;
  mediaOk.content = { '*/*': { schema: { type: 'string', format: 'binary' } } };
  return {
    list: operation({
      tag: 'Messages',
      summary: "The device's messages, newest first",
      description:
        'A page of records (outbound and inbound) filtered by `batchId`, `status` and `direction`, newest first; pass `nextCursor` as `cursor` for the next page. A filtered page reads at most 2,000 messages, so it may be short (even empty) while `nextCursor` is set.',
      rateLimit: r.messages,
      query: messagesQuerySchema,
      success: { status: 200, schema: 'MessagePage', description: 'A page.' },
      errors: [],
    }),
    message: withPathParam(
      operation({
        tag: 'Messages',
        summary: 'A message and its status',
        description: "The record of a message of the token's device (kept MESSAGE_RETENTION_SECONDS).",
        rateLimit: r.messages,
        query: emptyQuerySchema,
        success: { status: 200, schema: 'MessageResult', description: 'The message.' },
        errors: [404],
      }),
      'id',
    ),
    media,
  };
}
