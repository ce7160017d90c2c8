/** The label and chat-state routes and their answers in the OpenAPI document (see docs/labels.md). */
import {
  CHAT_ID_PATTERN,
  LABEL_COLOR_MAX,
  LABEL_ID_PATTERN,
  LABEL_LIMITS,
  chatLabelBodySchema,
  chatStateBodySchema,
  emptyQuerySchema,
  labelChatsQuerySchema,
  labelCreateBodySchema,
  labelUpdateBodySchema,
} from '@mgw/contracts';
import type { ApiConfig } from '../../config.js';
import type { Operations } from '../../http/route-table.js';
import type { JsonSchema } from '../../openapi/joi-schema.js';
import type { OperationSpec } from '../../openapi/operation.js';
import { closed, result } from '../../openapi/schema-helpers.js';
import type { LabelName } from './mount.js';

const chat = {
  type: 'string',
  pattern: CHAT_ID_PATTERN.source,
  description: 'The chat: a phone number, a `<digits>@lid`, or a group id.',
};
const labelId = { type: 'string', pattern: LABEL_ID_PATTERN.source, description: 'The label id.' };

/** A label as every answer names it: its id, name and colour. */
const labelFields = {
  id: labelId,
  name: { type: 'string' },
  color: { type: 'integer', minimum: 0, maximum: LABEL_COLOR_MAX },
};
const predefinedId = { type: 'string', description: "One of WhatsApp's predefined labels." };
/** `{ label }` of a label edit (a create, rename, recolour or delete). */
const editedLabel = (deleted: JsonSchema) =>
  result(
    closed({ label: closed({ ...labelFields, deleted }, ['id', 'name', 'color', 'deleted']) }, ['label']),
  );

export const labelSchemas: Record<string, JsonSchema> = {
  LabelCreated: editedLabel({ const: false }),
  LabelEdited: editedLabel({ type: 'boolean', description: 'True when it was deleted.' }),
  ChatLabels: result(
    closed(
      {
        chatId: chat,
        labels: {
          type: 'array',
          maxItems: LABEL_LIMITS.labels,
          items: closed({ ...labelFields, predefinedId }, ['id', 'name', 'color']),
        },
      },
      ['chatId', 'labels'],
    ),
  ),
  ChatLabelled: result(
    closed({ chat, applied: { const: true }, labelId, labeled: { type: 'boolean' } }, [
      'chat',
      'applied',
      'labelId',
      'labeled',
    ]),
  ),
  ChatStateChanged: result(closed({ chat, applied: { const: true } }, ['chat', 'applied'])),
  LabelList: result(
    closed(
      {
        total: { type: 'integer', minimum: 0, maximum: LABEL_LIMITS.labels },
        labels: {
          type: 'array',
          maxItems: LABEL_LIMITS.labels,
          items: closed(
            {
              ...labelFields,
              predefinedId,
              chats: {
                type: 'integer',
                minimum: 0,
                maximum: LABEL_LIMITS.chatsPerLabel,
                description: 'How many chats carry it.',
              },
            },
            ['id', 'name', 'color', 'chats'],
          ),
        },
      },
      ['total', 'labels'],
    ),
  ),
  LabelChats: result(
    closed(
      {
        labelId,
        chats: { type: 'array', maxItems: LABEL_LIMITS.pageMax, items: chat },
        next: {
          type: ['string', 'null'],
          description: 'Pass as `after` for the next page; null on the last.',
        },
      },
      ['labelId', 'chats', 'next'],
    ),
  ),
};

const param = (name: string, schema: JsonSchema, description: string) => ({
  name,
  in: 'path',
  required: true,
  description,
  schema,
});

const KEY =
  "These are app-state patches, made with the key the account's phone shares with its linked devices: 409 `The device has no app-state key yet…` until it has (a newly linked device gets it within moments of the phone being online).";

/** Each public label route's operation, by its handler's name (mount.ts). */
export function labelOperations(
  config: ApiConfig,
  operation: (spec: OperationSpec) => JsonSchema,
): Operations<LabelName> {
  const base = { tag: 'Labels' as const, rateLimit: config.rateLimits.groups, query: emptyQuerySchema };
  const withParams = (op: JsonSchema, params: JsonSchema[]) => {
    const o = op as { parameters?: JsonSchema[] };
    o.parameters = [...params, ...(o.parameters ?? [])];
    return op;
  };
  const chatParam = param('chatId', chat, 'The chat: a phone number, a `<digits>@lid`, or a group id.');
  const READ = `**Choice:** read from Redis, where the device's holder keeps what app-state sync told it (every label edit and chat labelled, by the phone, another linked device or this one; at most ${LABEL_LIMITS.labels} labels and ${LABEL_LIMITS.chatsPerLabel} chats each): no WhatsApp query, the cost of GET /status. 409 when no account is linked (what the device kept went with its logout).`;
  return {
    listLabels: operation({
      ...base,
      summary: "The account's WhatsApp Business labels",
      description: [
        "Each label the device learned (`id`, `name`, `color`, `predefinedId` for one of WhatsApp's predefined labels) and how many chats carry it, by id. A label deleted anywhere leaves the list.",
        READ,
      ].join('\n\n'),
      success: { status: 200, schema: 'LabelList', description: 'The labels.' },
      errors: [409],
    }),
    createLabel: operation({
      ...base,
      summary: 'Create a WhatsApp Business label',
      description: [
        `\`name\` (1-100 characters) and \`color\` (0-${LABEL_COLOR_MAX}, WhatsApp's palette). The gateway chooses the label's id (digits). The phone and the other linked devices see it; \`label.edited\` follows.`,
        KEY,
      ].join('\n\n'),
      body: labelCreateBodySchema,
      idempotent: true,
      success: { status: 200, schema: 'LabelCreated', description: 'The label.' },
      errors: [409, 413, 502, 504],
    }),
    updateLabel: withParams(
      operation({
        ...base,
        summary: 'Rename or recolour a label',
        description: [
          '`name` and/or `color` of a label the device knows (404 `Unknown label` otherwise): the same label edit a create makes, seen by the phone and the other linked devices; `label.edited` follows.',
          KEY,
        ].join('\n\n'),
        body: labelUpdateBodySchema,
        idempotent: true,
        success: { status: 200, schema: 'LabelEdited', description: 'The label as it is now.' },
        errors: [404, 409, 413, 502, 504],
      }),
      [param('labelId', labelId, 'The label id.')],
    ),
    deleteLabel: withParams(
      operation({
        ...base,
        summary: 'Delete a label',
        description: [
          'The label is deleted for the account (a label edit with `deleted`): its chats lose it, and it leaves `GET /labels`; `label.edited` follows. 404 `Unknown label` for a label the device does not know.',
          KEY,
        ].join('\n\n'),
        idempotent: true,
        success: { status: 200, schema: 'LabelEdited', description: 'The label, deleted.' },
        errors: [404, 409, 502, 504],
      }),
      [param('labelId', labelId, 'The label id.')],
    ),
    labelChats: withParams(
      operation({
        ...base,
        query: labelChatsQuerySchema,
        summary: 'The chats carrying a label',
        description: [
          `The chat ids (phone numbers, \`<digits>@lid\`, group ids) in lexical order, \`limit\` at a time (${LABEL_LIMITS.pageDefault} by default, at most ${LABEL_LIMITS.pageMax}); \`after\`: the \`next\` of the previous page. 404 \`Unknown label\` for a label the device does not know.`,
          READ,
        ].join('\n\n'),
        success: { status: 200, schema: 'LabelChats', description: 'A page of chats.' },
        errors: [404, 409],
      }),
      [param('labelId', labelId, 'The label id.')],
    ),
    chatLabels: withParams(
      operation({
        ...base,
        summary: 'The labels a chat carries',
        description: ['The labels on this chat, by id (none: an empty list).', READ].join('\n\n'),
        success: { status: 200, schema: 'ChatLabels', description: "The chat's labels." },
        errors: [409],
      }),
      [chatParam],
    ),
    labelChat: withParams(
      operation({
        ...base,
        summary: 'Put a label on a chat',
        description: ['`labelId`: the label. `label.association` follows.', KEY].join('\n\n'),
        body: chatLabelBodySchema,
        idempotent: true,
        success: { status: 200, schema: 'ChatLabelled', description: 'Labelled.' },
        errors: [409, 413, 502, 504],
      }),
      [chatParam],
    ),
    unlabelChat: withParams(
      operation({
        ...base,
        summary: 'Take a label off a chat',
        description: ['`label.association` (`labeled: false`) follows.', KEY].join('\n\n'),
        idempotent: true,
        success: { status: 200, schema: 'ChatLabelled', description: 'Unlabelled.' },
        errors: [409, 502, 504],
      }),
      [chatParam, param('labelId', labelId, 'The label id.')],
    ),
    chatState: withParams(
      operation({
        ...base,
        summary: "Archive, pin or mute a chat on the account's devices",
        description: [
          '`archived`, `pinned`, `muted` (with `muteSeconds`, 8 hours when absent): each given is set, on the phone and every linked device.',
          KEY,
        ].join('\n\n'),
        body: chatStateBodySchema,
        idempotent: true,
        success: { status: 200, schema: 'ChatStateChanged', description: 'Applied.' },
        errors: [409, 413, 502, 504],
      }),
      [chatParam],
    ),
  };
}
