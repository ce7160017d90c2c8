/** The chat, read-receipt and account-settings routes and their answers in the OpenAPI document (docs/chats-and-calls.md). */
import {
  CHAT_ID_PATTERN,
  CHAT_LIMITS,
  accountSettingsBodySchema,
  chatMessagesQuerySchema,
  chatsQuerySchema,
  emptyQuerySchema,
} from '@mgw/contracts';
import type { Operations } from '../../http/route-table.js';
import { messageSchemas } from '../messages/index.js';
import type { OperationSpec } from '../../openapi/operation.js';
import { closed, int, ref, result, str } from '../../openapi/schema-helpers.js';
import type { ChatName } from './mount.js';
import type { ApiConfig } from '../../config.js';
import type { AdminOperationSpec } from '../../openapi/admin-operation.js';
import type { JsonSchema } from '../../openapi/joi-schema.js';
import { replyBodySchema, type ChatAdminName } from './admin.js';

const chatId = {
  type: 'string',
  pattern: CHAT_ID_PATTERN.source,
  description: "A phone number (digits), a contact's LID (`<digits>@lid`) or a group id (`<digits>@g.us`).",
};

/**
 * A message of a chat: GET /messages/{id}'s fields, plus what an outbound text or attachment said
 * (read from its request's content) and, for an outbound message to a group, its `chat`.
 */
function chatMessageSchema(): JsonSchema {
  const message = messageSchemas.Message as { properties: Record<string, JsonSchema>; required: string[] };
  const inboundAttachment = message.properties.attachment!;
  return closed(
    {
      ...message.properties,
      text: str(
        `The text or caption, both directions (an outbound one from its request's content; an edited one: its current text). Cut at 1,000 characters with \`textTruncated\`.`,
      ),
      textTruncated: { const: true, description: 'The text or caption was cut at 1,000 characters.' },
      attachment: {
        anyOf: [
          inboundAttachment,
          closed(
            {
              type: str('image, video, audio, document or sticker.'),
              mimeType: str(''),
              fileName: str(''),
              caption: str(''),
            },
            ['type'],
          ),
        ],
        description:
          'Inbound: the attachment (its bytes: GET /messages/{id}/media). Outbound: what was sent.',
      },
      chat: {
        anyOf: [
          ref('GroupChat'),
          closed({ type: { const: 'group' }, id: str('The group.') }, ['type', 'id']),
        ],
        description: 'A group message: the group (an outbound one names only its id).',
      },
    },
    message.required,
  );
}

export const chatSchemas: Record<string, JsonSchema> = {
  ChatMessage: chatMessageSchema(),
  Chat: closed(
    {
      id: chatId,
      type: { enum: ['direct', 'group'] },
      contact: {
        ...ref('ContactIdentity'),
        description: "A one-to-one chat's contact, both identities the device knows.",
      },
      subject: str("A group's subject, as its last message from a member told it."),
      unreadCount: int('Inbound messages not marked read (through the API or automatically).'),
      lastActivityAt: {
        type: 'string',
        format: 'date-time',
        description: 'When its last message was received or sent.',
      },
      lastMessage: {
        ...closed(
          {
            messageId: str('Its id (GET /messages/{id}).'),
            direction: { enum: ['inbound', 'outbound'] },
            at: { type: 'string', format: 'date-time', description: 'When it was received, or sent.' },
            text: str('The start of its text or caption (100 characters), when it has one.'),
          },
          ['messageId', 'direction', 'at'],
        ),
        description: 'The last message in short, read from the chat itself (no message record is read).',
      },
    },
    ['id', 'type', 'unreadCount', 'lastActivityAt', 'lastMessage'],
  ),
  ChatPage: result(
    closed(
      {
        chats: { type: 'array', items: ref('Chat') },
        nextCursor: str(
          'The `cursor` of the next page (less recently active chats); absent on the last one.',
        ),
      },
      ['chats'],
    ),
  ),
  ChatMessagePage: result(
    closed(
      {
        messages: { type: 'array', items: ref('ChatMessage') },
        nextCursor: str('The `cursor` of the next (older) page; absent on the last one.'),
      },
      ['messages'],
    ),
  ),
  ReadResult: result(
    closed(
      {
        chatId,
        messageId: str('POST /messages/{id}/read: the message.'),
        marked: int(
          'Messages this request took out of the unread count (already read ones are not counted).',
        ),
        receiptsShown: {
          type: 'boolean',
          description:
            "`true`: the contacts were shown the read receipts (blue ticks). `false`: the account's read-receipts privacy is off, so WhatsApp told only the account's own devices (`read-self`); the unread count dropped all the same.",
        },
        unreadCount: int("The chat's unread messages now."),
      },
      ['chatId', 'marked', 'receiptsShown', 'unreadCount'],
    ),
  ),
  AccountSettings: result(
    closed(
      {
        rejectCalls: {
          type: 'boolean',
          description: 'Incoming calls are rejected at once (off by default).',
        },
        rejectCallMessage: {
          type: ['string', 'null'],
          description:
            'With `rejectCalls`: the text the caller is answered with, sent through the paced queue.',
        },
        autoMarkRead: {
          type: 'boolean',
          description: 'Incoming messages are marked read as they arrive (off by default).',
        },
        historySync: {
          type: 'boolean',
          description:
            "The chats and messages WhatsApp's history sync sends a device at link time are kept (off by default; set it before linking).",
        },
      },
      ['rejectCalls', 'rejectCallMessage', 'autoMarkRead', 'historySync'],
    ),
  ),
};

const chatParam = {
  name: 'chatId',
  in: 'path',
  required: true,
  description: chatId.description,
  schema: { type: 'string', pattern: CHAT_ID_PATTERN.source },
};
const idParam = { name: 'id', in: 'path', required: true, schema: { type: 'string', minLength: 1 } };

const INDEX = `**Choice:** read from the device's chat index, not from WhatsApp: a chat enters it with a message a contact wrote, or with one the account sent once it is \`sent\` (messages sent from the phone, or before the link, are not known); it keeps at most ${CHAT_LIMITS.chats.toLocaleString('en-US')} chats and ${CHAT_LIMITS.messagesPerChat.toLocaleString('en-US')} messages per chat, each as long as the message retention.`;
const READ =
  "**Choice:** read receipts go out as the account's read-receipts privacy allows (WhatsApp's own rule): with it off, only the account's devices learn it and `receiptsShown` is `false`. 409 when the device is not connected; 502 when WhatsApp failed; 504 when no answer came in time.";

/** Each public chat route's operation, by its handler's name (mount.ts). */
export function chatOperations(
  config: ApiConfig,
  operation: (spec: OperationSpec) => JsonSchema,
): Operations<ChatName> {
  const base = { tag: 'Chats' as const, rateLimit: config.rateLimits.messages };
  const withParams = (op: JsonSchema, ...params: JsonSchema[]) => {
    const o = op as { parameters?: JsonSchema[] };
    o.parameters = [...params, ...(o.parameters ?? [])];
    return op;
  };
  return {
    list: operation({
      ...base,
      summary: "The device's chats",
      description: [
        'One-to-one chats and groups, most recently active first, each with its unread count and last message.',
        INDEX,
      ].join('\n\n'),
      query: chatsQuerySchema,
      success: { status: 200, schema: 'ChatPage', description: 'A page of chats.' },
      errors: [],
    }),
    messages: withParams(
      operation({
        ...base,
        summary: "A chat's messages",
        description: [
          "The chat's messages in both directions, newest first, paged by `cursor`. 404 when the device has no such chat.",
          INDEX,
        ].join('\n\n'),
        query: chatMessagesQuerySchema,
        success: { status: 200, schema: 'ChatMessagePage', description: 'A page of messages.' },
        errors: [404],
      }),
      chatParam,
    ),
    readChat: withParams(
      operation({
        ...base,
        summary: 'Mark a chat read',
        description: [
          `Sends read receipts for the chat's unread messages (at most ${CHAT_LIMITS.unreadPerChat.toLocaleString('en-US')}) and sets its unread count to 0. 404 when the device has no such chat.`,
          READ,
        ].join('\n\n'),
        query: emptyQuerySchema,
        success: { status: 200, schema: 'ReadResult', description: 'Marked.' },
        errors: [404, 409, 502, 504],
      }),
      chatParam,
    ),
    readMessage: withParams(
      operation({
        ...base,
        summary: 'Mark a message read',
        description: [
          "Sends the read receipt of a message a contact wrote, and of the unread ones before it in its chat (as opening the chat does). 404 for an outbound message or another device's.",
          READ,
        ].join('\n\n'),
        query: emptyQuerySchema,
        success: { status: 200, schema: 'ReadResult', description: 'Marked.' },
        errors: [404, 409, 502, 504],
      }),
      idParam,
    ),
    getSettings: operation({
      ...base,
      tag: 'Chats',
      rateLimit: config.rateLimits.webhook,
      summary: "The device's account settings",
      description:
        'Calls rejected automatically (and the text the caller gets), incoming messages marked read automatically.',
      query: emptyQuerySchema,
      success: { status: 200, schema: 'AccountSettings', description: 'The settings.' },
      errors: [],
    }),
    patchSettings: operation({
      ...base,
      rateLimit: config.rateLimits.webhook,
      summary: "Change the device's account settings",
      description: [
        'The fields given change, the others stay; `null` puts one back to its default (all off).',
        "`rejectCalls`: every incoming call is rejected at once (a bot cannot answer; the caller's phone stops ringing) and `call.missed` says `rejected`; with `rejectCallMessage`, the caller is then sent that text as a message of the device (paced, within its caps: account protection applies; not for group calls).",
        "`autoMarkRead`: every incoming message is marked read as it arrives (read receipts as the account's privacy allows).",
        "`historySync`: the chats and messages the account's phone sends a device right after it links (WhatsApp's history sync) are kept in the device's chats (`GET /chats`, a chat's messages, each with `history: true`; never unread, no events, not in `GET /messages`), at most `HISTORY_SYNC_MAX_MESSAGES`. Set it before `/connect`.",
      ].join('\n\n'),
      query: emptyQuerySchema,
      body: accountSettingsBodySchema,
      success: { status: 200, schema: 'AccountSettings', description: 'The settings now.' },
      errors: [413],
    }),
  };
}

// --- The chats' admin routes in the admin document (admin.ts): the Chats page's lists and reply.

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
