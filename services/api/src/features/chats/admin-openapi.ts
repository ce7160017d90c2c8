/** The chats' admin routes in the admin document (admin.ts): the Chats page's lists and reply. */
import { chatMessagesQuerySchema, chatsQuerySchema, emptyQuerySchema } from '@mgw/contracts';
import type { ApiConfig } from '../../config.js';
import type { AdminOperationSpec } from '../../openapi/admin-operation.js';
import type { JsonSchema } from '../../openapi/joi-schema.js';
import { closed, ref, str } from '../../openapi/schema-helpers.js';
import { replyBodySchema, type ChatAdminName } from './admin.js';
import { chatSchemas } from './openapi.js';

const yes = { const: true } as const;

type Closed = { properties: Record<string, JsonSchema>; required: string[] };

/**
 * A message as the admin views show it (devices/message-view.ts): a chat message's fields, and
 * for an edit or a delete of ours what it changes (`revises`).
 */
function adminMessage(): JsonSchema {
  const message = chatSchemas.ChatMessage as Closed;
  return closed(
    {
      ...message.properties,
      revises: closed(
        {
          messageId: str('The message it changes.'),
          action: { enum: ['edit', 'delete'] },
          text: str("An edit's new text."),
        },
        ['messageId', 'action'],
      ),
    },
    message.required,
  );
}

/** A chat of the Chats page: the public chat's fields, its pin, archive, mute and labels. */
function chatWithState(): JsonSchema {
  const chat = chatSchemas.Chat as Closed;
  return closed(
    {
      ...chat.properties,
      pinned: { type: 'boolean' },
      archived: { type: 'boolean' },
      mutedUntil: {
        type: ['string', 'null'],
        description:
          'Muted until then (an ISO time; muted for ever: `+275760-09-13T00:00:00.000Z`, the last time a JavaScript date holds, which is no RFC 3339 date-time); null: not muted.',
      },
      labels: { type: 'array', items: str('A label id of the device.') },
    },
    [...chat.required, 'pinned', 'archived', 'mutedUntil', 'labels'],
  );
}

export const chatAdminSchemas: Record<string, JsonSchema> = {
  AdminMessage: adminMessage(),
  AdminChat: chatWithState(),
};

export function chatAdminOperations(
  _config: ApiConfig,
  op: (spec: AdminOperationSpec) => JsonSchema,
): Partial<Record<ChatAdminName, JsonSchema>> {
  const tag = 'Chats' as const;
  return {
    adminChats: op({
      tag,
      summary: "The device's chats",
      description: 'As the public GET /chats, with each chat\u2019s pin, archive, mute and labels.',
      query: chatsQuerySchema,
      success: {
        status: 200,
        schema: closed(
          {
            success: yes,
            chats: { type: 'array', items: ref('AdminChat') },
            nextCursor: str('The `cursor` of the next page; absent on the last one.'),
          },
          ['success', 'chats'],
        ),
        description: 'The chats.',
      },
      errors: [],
    }),
    adminChatMessages: op({
      tag,
      summary: 'The messages of a chat',
      description: 'Newest first, as the Messages page shows them (what a sent text or attachment said).',
      query: chatMessagesQuerySchema,
      success: {
        status: 200,
        schema: closed(
          {
            success: yes,
            messages: { type: 'array', items: ref('AdminMessage') },
            nextCursor: str('The `cursor` of the next (older) page; absent on the last one.'),
          },
          ['success', 'messages'],
        ),
        description: 'The messages.',
      },
      errors: [],
    }),
    adminReply: op({
      tag,
      summary: 'Reply in a chat',
      description: 'A text, an attachment or a reaction to the chat, sent as POST /send sends it.',
      query: emptyQuerySchema,
      body: replyBodySchema,
      success: { status: 202, schema: 'SendResult', description: 'Queued.' },
      errors: [409, 422, 502, 504],
    }),
  };
}
