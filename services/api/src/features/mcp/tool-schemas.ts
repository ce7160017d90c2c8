import { z } from 'zod';
import {
  CHAT_ID_PATTERN,
  CHAT_MESSAGES_CURSOR_PATTERN,
  CHATS_CURSOR_PATTERN,
  MAX_CONTACT_CHECK,
  MESSAGE_STATUSES,
  PHONE_PATTERN,
  STRING_LIMITS,
  TEMPLATE_LANGUAGE_PATTERN,
  TEMPLATE_LIMITS,
  TEMPLATE_NAME_PATTERN,
  USERNAME_LIMITS,
  USERNAME_PIN_PATTERN,
} from '@mgw/contracts';

/**
 * The MCP tools' input schemas (zod: what the SDK advertises and checks), built from the limits of
 * @mgw/contracts that the routes' joi schemas use — one source for both. They describe the shape;
 * each tool's request then goes through its route, whose joi schema still judges every value
 * (a recipient that is neither a number nor a LID or group id: the route's 400 with its details).
 */
export function toolSchemas(maxRecipients: number) {
  const recipient = z
    .string()
    .min(1)
    .max(64)
    .describe(
      'A phone number in international format, digits only (e.g. 4915123456789), a `<digits>@lid`, a WhatsApp username `@name` (see resolve_username) or a group id `<id>@g.us`',
    );
  const chatId = z
    .string()
    .regex(CHAT_ID_PATTERN)
    .describe(
      'A chat id from list_chats: the contact\u2019s phone (digits), a `<digits>@lid` or a group id `<id>@g.us`',
    );
  return {
    sendMessage: {
      to: z
        .union([recipient, z.array(recipient).min(1).max(maxRecipients)])
        .describe(`One recipient, or a list of at most ${maxRecipients} (one message each, a batch)`),
      text: z.string().min(1).max(STRING_LIMITS.text).describe('The message text'),
      idempotencyKey: z
        .string()
        .min(1)
        .max(255)
        .optional()
        .describe('Replays the first answer of a request with the same key (24 h, per token)'),
    },
    sendTemplate: {
      to: z
        .union([recipient, z.array(recipient).min(1).max(maxRecipients)])
        .describe(`One recipient, or a list of at most ${maxRecipients} (one message each, a batch)`),
      name: z
        .string()
        .regex(TEMPLATE_NAME_PATTERN)
        .max(TEMPLATE_LIMITS.name)
        .describe("An approved template of the Cloud API number's WhatsApp Business Account"),
      language: z
        .string()
        .regex(TEMPLATE_LANGUAGE_PATTERN)
        .describe('The template language as the WABA lists it, e.g. en_US or ar'),
      components: z
        .array(z.record(z.string(), z.unknown()))
        .max(TEMPLATE_LIMITS.components)
        .optional()
        .describe(
          "The template's parameters in Meta's shape: [{ type: 'body', parameters: [{ type: 'text', text: '…' }] }, …]",
        ),
      idempotencyKey: z
        .string()
        .min(1)
        .max(255)
        .optional()
        .describe('Replays the first answer of a request with the same key (24 h, per token)'),
    },
    checkNumbers: {
      phones: z
        .array(z.string().regex(PHONE_PATTERN))
        .min(1)
        .max(MAX_CONTACT_CHECK)
        .describe('Phone numbers in international format, digits only'),
    },
    resolveUsername: {
      username: z
        .string()
        .min(1)
        .max(64)
        .describe(
          `A WhatsApp username, with or without @ (${USERNAME_LIMITS.minLength} to ${USERNAME_LIMITS.maxLength} of a-z, 0-9, _ and .)`,
        ),
      pin: z
        .string()
        .regex(USERNAME_PIN_PATTERN)
        .optional()
        .describe('Its 4-digit key, for a username guarded by one'),
    },
    getStatus: {},
    listTemplates: {
      name: z
        .string()
        .regex(TEMPLATE_NAME_PATTERN)
        .max(TEMPLATE_LIMITS.name)
        .optional()
        .describe('Only the templates of this name'),
      language: z
        .string()
        .regex(TEMPLATE_LANGUAGE_PATTERN)
        .optional()
        .describe('Only this language, e.g. en_US or ar'),
      status: z
        .string()
        .max(32)
        .optional()
        // The route reads it in any letter case and judges it (TEMPLATE_STATUS_PATTERN).
        .describe('Only this status as Meta names it, e.g. APPROVED (the only one sent)'),
    },
    listMessages: {
      direction: z.enum(['outbound', 'inbound']).optional(),
      status: z.enum(MESSAGE_STATUSES).optional(),
      batchId: z.string().max(128).optional().describe('Only the messages of this list'),
      limit: z.number().int().min(1).max(100).optional().describe('Messages per page (50 by default)'),
      cursor: z.string().max(64).regex(/^\d+$/).optional().describe('The nextCursor of a previous page'),
    },
    getMessage: {
      messageId: z
        .string()
        .min(1)
        .max(128)
        // One path segment of GET /messages/{id}, as the API reads paths (docs/security.md): never
        // a dot segment, a separator or a control character, which no message id holds.
        .refine((id) => !/^\.{1,2}$/.test(id) && !/[/\\]|\p{Cc}/u.test(id), {
          message: 'A messageId is one path segment: not . or .., no slash, backslash or control character',
        })
        .describe('A messageId (from send_message or list_messages)'),
    },
    listChats: {
      limit: z.number().int().min(1).max(100).optional().describe('Chats per page (20 by default)'),
      cursor: z
        .string()
        .max(96)
        .regex(CHATS_CURSOR_PATTERN)
        .optional()
        .describe('The nextCursor of a previous page'),
    },
    getChatMessages: {
      chatId,
      limit: z.number().int().min(1).max(100).optional().describe('Messages per page (50 by default)'),
      cursor: z
        .string()
        .max(24)
        .regex(CHAT_MESSAGES_CURSOR_PATTERN)
        .optional()
        .describe('The nextCursor of a previous page'),
    },
    markChatRead: { chatId },
  };
}
