import type { Request, RequestHandler } from 'express';
import {
  CHAT_ERRORS,
  ERRORS,
  Joi,
  chatIdSchema,
  chatMessagesQuerySchema,
  chatsQuerySchema,
  emptyQuerySchema,
  sendBodySchema,
  type ReactionInput,
  type SendAttachmentInput,
} from '@mgw/contracts';
import type { Uses } from '../../api-services.js';
import { ApiError } from '../../http/api-error.js';
import { respond } from '../../http/respond.js';
import { deviceIdOf } from '../../http/route-helpers.js';
import { FIELD_ALLOWANCE, type AdminRoute, type BodySpec } from '../../http/route-table.js';
import { parse } from '../../http/validation.js';
import { SEND_BODY_LIMIT_BYTES, sendAnswer, sendMessage, type SendOutcome } from '../send/index.js';
import { listChatMessages, listChatsWithState, type ChatListServices } from './list-chats.js';
import type { ChatName } from './mount.js';

export type ChatAdminName = 'adminChats' | 'adminChatMessages' | 'adminReply' | 'adminReadChat';

/**
 * A reply's body: as the public /send's (SEND_BODY_LIMIT_BYTES: a 10 MB attachment is ~13.4 MiB of
 * base64), over it the same 413 `ERRORS.bodyTooLarge`; a text of 65,536 characters at 6 bytes each
 * in JSON (`\uXXXX`) fits too. Two levels: `{ attachment: {…} }`, `{ reaction: {…} }`.
 */
const REPLY_BODY: BodySpec = {
  json: {
    limitBytes: SEND_BODY_LIMIT_BYTES,
    tooLargeError: ERRORS.bodyTooLarge,
    maxDepth: 2,
    maxValues: FIELD_ALLOWANCE,
  },
};

const chat = '/devices/:deviceId/chats/:chatId';

/**
 * The device's chats and a chat's messages (the dashboard's Chats page), as the public GET
 * /chats…; a reply (a text or an attachment) or a reaction in a chat, as the public POST /send;
 * marking a chat read, as the public POST /chats/:chatId/read. A chat's labels and its archive,
 * pin and mute are the labels feature's (features/labels/admin.ts).
 */
export const chatAdminRoutes: AdminRoute<ChatAdminName>[] = [
  {
    surface: 'admin',
    method: 'get',
    path: '/devices/:deviceId/chats',
    handler: 'adminChats',
    console: 'read',
  },
  {
    surface: 'admin',
    method: 'get',
    path: `${chat}/messages`,
    handler: 'adminChatMessages',
    console: 'read',
  },
  {
    surface: 'admin',
    method: 'post',
    path: `${chat}/messages`,
    body: REPLY_BODY,
    handler: 'adminReply',
    console: 'chat',
  },
  {
    surface: 'admin',
    method: 'post',
    path: `${chat}/read`,
    body: 'none',
    handler: 'adminReadChat',
    console: 'chat',
  },
];

/**
 * What the operator sends in a chat: one text, one attachment (its caption inside it), or a
 * reaction to one of the chat's messages (`emoji: ""` removes ours).
 */
type ReplyContent = { text: string } | { attachment: SendAttachmentInput } | { reaction: ReactionInput };

/**
 * `{ text }`, `{ attachment }` or `{ reaction: { messageId, emoji } }`: exactly one, each judged by
 * the public /send's own rule (its limits, no lone surrogate; an attachment's url, base64 or
 * mediaId, type, filename, mimeType and caption; one emoji or "").
 */
const sendFields = sendBodySchema(1);
export const replyBodySchema = Joi.object<ReplyContent>({
  text: sendFields.extract('text'),
  attachment: sendFields.extract('attachment'),
  reaction: sendFields.extract('reaction'),
})
  .xor('text', 'attachment', 'reaction')
  .messages({
    'object.missing': 'a reply must have text, attachment or reaction',
    'object.xor': 'a reply has only one of text, attachment or reaction',
  });

/** What the reply asks of the services: the /send use case's (send-message.ts). */
type ReplyServices = Uses<
  'acceptor' | 'media' | 'blocklist' | 'messages' | 'inbound' | 'redis' | 'cloudSend'
>;

/**
 * An operator's reply in a chat of the Chats page: a text, an attachment or a reaction to the
 * chat's contact or group, accepted exactly as a public `POST /send` of `{ to: chatId, … }` by the
 * device is (the same use case): the paced queue, the accept script with its quotas and queue cap,
 * opt-outs and the account's blocklist all apply, an attachment over 10 MB is refused as /send
 * refuses it (413), a reaction's target is resolved as /send resolves it (our messageId of a
 * message of the chat, sent or received: 404 for none), and a refusal is the same outcome.
 *
 * Rate limit: no hit is handed over, so the reply counts against no per-token /send limit (an
 * admin session has no token, and one person typing replies is no burst). What bounds it is what
 * bounds every message of the device: its pacing, its daily caps and its queue cap (429).
 */
function replyInChat(
  s: ReplyServices,
  deviceId: string,
  chatId: string,
  content: ReplyContent,
): Promise<SendOutcome> {
  return sendMessage(s, deviceId, { to: chatId, ...content });
}

const chatParams = Joi.object({ chatId: chatIdSchema });
const chatIdOf = (req: Request): string => parse(chatParams, { chatId: req.params.chatId }).chatId as string;

/**
 * The admin routes' handlers. Marking a chat read is the public handler built for the device the
 * path names (mount.ts builds them: `chatRoutes(s, deviceIdOf)`); the lists answer more than the
 * public ones (each chat's state and labels) in their own envelope.
 */
export function chatAdminHandlers(
  s: ChatListServices & ReplyServices,
  forPathDevice: Record<ChatName, RequestHandler>,
): Record<ChatAdminName, RequestHandler> {
  return {
    /**
     * GET /devices/:deviceId/chats — the public GET /chats of any device, each chat with its
     * `pinned`, `archived`, `mutedUntil` and `labels` (listChatsWithState).
     */
    adminChats: async (req, res) => {
      const q = parse(chatsQuerySchema, req.query);
      res.status(200).json({ success: true, ...(await listChatsWithState(s, deviceIdOf(req), q)) });
    },
    /** GET /devices/:deviceId/chats/:chatId/messages — a chat's messages, as the public route pages them. */
    adminChatMessages: async (req, res) => {
      const deviceId = deviceIdOf(req);
      const chatId = chatIdOf(req);
      const q = parse(chatMessagesQuerySchema, req.query);
      // The page script answers whether the device has the chat in the same round trip.
      const page = await listChatMessages(s, deviceId, chatId, q);
      if (!page) throw new ApiError(404, CHAT_ERRORS.notFound);
      res.status(200).json({ success: true, ...page });
    },
    /**
     * POST /devices/:deviceId/chats/:chatId/messages `{ text }`, `{ attachment }` or `{ reaction }`
     * — 202 `{ success, messageId }`, or the public /send's refusal (its status and error).
     */
    adminReply: async (req, res) => {
      const deviceId = deviceIdOf(req);
      const chatId = chatIdOf(req);
      parse(emptyQuerySchema, req.query);
      const content = parse(replyBodySchema, req.body ?? {}) as ReplyContent;
      respond(res, sendAnswer(await replyInChat(s, deviceId, chatId, content)));
    },
    /** POST /devices/:deviceId/chats/:chatId/read — as the public POST /chats/:chatId/read answers. */
    adminReadChat: forPathDevice.readChat,
  };
}
