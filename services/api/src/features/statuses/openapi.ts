/** The status routes and their answers in the OpenAPI document (see docs/broadcasts.md). */
import {
  emptyQuerySchema,
  STATUS_ID_PATTERN,
  STATUS_LIMITS,
  statusBodySchema,
  statusSettingsSchema,
} from '@mgw/contracts';
import type { ApiConfig } from '../../config.js';
import type { JsonSchema } from '../../openapi/joi-schema.js';
import type { OperationSpec } from '../../openapi/operation.js';
import type { Operations } from '../../http/route-table.js';
import type { StatusName } from './mount.js';
import { closed, messageIdString as uuid, ref, result, str } from '../../openapi/schema-helpers.js';

const statusSummary = closed(
  {
    messageId: uuid('The status (its message: `GET /messages/{id}` shows it too).'),
    batchId: uuid('Its list of one: pause, resume or cancel it with `/batches/{batchId}/…`.'),
    status: str('Its message status: `scheduled`, `queued`, `sent`, `failed` or `deleted`.'),
    kind: { enum: ['text', 'image', 'video', 'audio'] },
    audienceSize: { type: 'integer', minimum: 0, description: 'Viewers it was posted to.' },
    sendAt: str('When it is scheduled (UTC).'),
    sentAt: str('When WhatsApp took it.'),
    expiresAt: str('When WhatsApp stops showing it: 24 hours after `sentAt`.'),
    error: str('Why it failed.'),
    views: { type: 'integer', minimum: 0, description: 'Viewers who opened it.' },
    viewers: {
      type: 'array',
      items: closed({ viewer: ref('ContactIdentity'), viewedAt: str('When (UTC).') }, ['viewer', 'viewedAt']),
    },
  },
  ['messageId', 'status', 'kind', 'audienceSize', 'views', 'viewers'],
);

export const broadcastSchemas: Record<string, JsonSchema> = {
  StatusPosted: result(
    closed(
      {
        messageId: uuid('The status.'),
        batchId: uuid('Its list of one (pause, resume, cancel).'),
        audienceSize: { type: 'integer', minimum: 1, description: 'Viewers it goes to.' },
        sendAt: str('When it is scheduled (UTC), if later than now.'),
      },
      ['messageId', 'batchId', 'audienceSize'],
    ),
  ),
  StatusList: result(closed({ statuses: { type: 'array', items: statusSummary } }, ['statuses'])),
  StatusDeleted: result(
    closed(
      {
        messageId: uuid('The status.'),
        deleteMessageId: uuid('The revoke sent to its viewers (a message of its own), when it was sent.'),
        status: { enum: ['deleted', 'deleting'] },
      },
      ['messageId', 'status'],
    ),
  ),
  StatusSettings: result(
    closed(
      {
        receiveStatuses: {
          type: 'boolean',
          description: "Contacts' statuses become `status.received` events.",
        },
      },
      ['receiveStatuses'],
    ),
  ),
};

const idParam = {
  name: 'id',
  in: 'path',
  required: true,
  description: 'The status (the `messageId` POST /statuses answered).',
  schema: { type: 'string', pattern: STATUS_ID_PATTERN.source },
};

/** The status routes' operations, by handler (mount.ts), built with the document's `operation`. */
export function statusOperations(
  config: ApiConfig,
  operation: (spec: OperationSpec) => JsonSchema,
): Operations<StatusName> {
  const base = {
    tag: 'Broadcasts' as const,
    rateLimit: config.rateLimits.broadcasts,
    query: emptyQuerySchema,
  };
  const remove = operation({
    ...base,
    summary: 'Delete a status',
    description: [
      'A status still scheduled or queued leaves the queue at once (200 `deleted`): nothing is ever sent. A sent one, within its 24 hours, is revoked for the viewers it went to by a message of its own, queued and paced like any (202 `deleting`; the status reads `deleted` once sent).',
      '404 for an id that is no status of this device; 409 when it failed, was already deleted, or expired.',
    ].join('\n\n'),
    success: { status: 202, schema: 'StatusDeleted', description: 'The revoke is queued.' },
    alsoSuccess: { status: 200, schema: 'StatusDeleted', description: 'Taken out of the queue: never sent.' },
    errors: [404, 409],
  });
  (remove as { parameters?: unknown[] }).parameters = [
    idParam,
    ...((remove as { parameters?: unknown[] }).parameters ?? []),
  ];
  return {
    post: operation({
      ...base,
      summary: 'Post a status update',
      description: [
        `A status ("story") seen for 24 hours: \`text\` (1-${STATUS_LIMITS.text} characters, with \`backgroundColor\` and \`font\`), or an \`attachment\` (image or video with an optional caption, or audio: a voice note), to \`audience\`: 1 to ${STATUS_LIMITS.audience} phone numbers or LIDs, or \`"contacts"\` (every chat of the account; over ${STATUS_LIMITS.audience} it is refused whole, 400).`,
        '**Choice:** it goes through the send queue as one message to `status@broadcast` (`GET /messages/{id}`, `message.sent`/`failed`): sent once, paced and counted as one message whatever its audience, held by `sendAt`, and a list of one (`batchId`) that pause, resume and cancel steer. Viewers who opted out are left out when it goes.',
      ].join('\n\n'),
      body: statusBodySchema,
      idempotent: true,
      success: { status: 202, schema: 'StatusPosted', description: 'Accepted: queued (or scheduled).' },
      errors: [409, 413, 429],
    }),
    list: operation({
      ...base,
      summary: "The account's current statuses",
      description:
        'Statuses due within the last 24 hours (and those scheduled), newest first, each with its message status and who viewed it (`status.viewed` events tell the same as it happens).',
      success: { status: 200, schema: 'StatusList', description: 'The statuses.' },
      errors: [],
    }),
    getSettings: operation({
      ...base,
      summary: 'Status settings',
      description: "Whether contacts' statuses become `status.received` events (off by default).",
      success: { status: 200, schema: 'StatusSettings', description: 'The settings.' },
      errors: [],
    }),
    putSettings: operation({
      ...base,
      summary: 'Change status settings',
      description:
        "`receiveStatuses`: contacts' statuses become `status.received` events (their text sealed at rest until delivered).",
      body: statusSettingsSchema,
      success: { status: 200, schema: 'StatusSettings', description: 'The settings now.' },
      errors: [413],
    }),
    remove,
  };
}
