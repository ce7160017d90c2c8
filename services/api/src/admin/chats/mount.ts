import type { Request, RequestHandler } from 'express';
import { Joi } from '@mgw/contracts';
import {
  CHAT_ERRORS,
  ERRORS,
  chatIdSchema,
  chatMessagesQuerySchema,
  chatsQuerySchema,
  emptyQuerySchema,
  sendBodySchema,
} from '@mgw/contracts';
import { DeviceCommandClient } from '@mgw/store';
import type { ApiServices } from '../../api-services.js';
import { ApiError } from '../../http/api-error.js';
import { jsonBody } from '../../http/body.js';
import { respond } from '../../http/respond.js';
import { noQuery } from '../../http/route-helpers.js';
import { FIELD_ALLOWANCE } from '../../http/route-table.js';
import { parse } from '../../http/validation.js';
import { listChatMessages, listChatsWithState } from '../../features/chats/list-chats.js';
import { readAnswer } from '../../features/chats/mount.js';
import { readChat } from '../../features/chats/read-chat.js';
import { labelRoutes } from '../../features/labels/mount.js';
import { SEND_BODY_LIMIT_BYTES, sendAnswer } from '../../features/send/mount.js';
import { deviceIdOf, type AdminMount, type AdminRoute } from '../admin-routes.js';
import { replyInChat, type ReplyContent } from './reply.js';

/**
 * The device's chats and a chat's messages (the Chats page), as the public GET /chats…; a reply
 * (a text or an attachment) or a reaction in a chat, as the public POST /send (reply.ts), and
 * marking a chat read, as the public POST /chats/:chatId/read; a chat's labels and its archive,
 * pin and mute, as the public /chats/:chatId/labels… and PATCH /chats/:chatId (features/labels:
 * no rate limit, as every admin route; an Idempotency-Key in the device's admin space).
 */
export const chats: AdminMount = ({ s, guard, body, none }) => [
  ...chatStateRoutes(s, guard, body, none),
  { method: 'get', path: '/devices/:deviceId/chats', handlers: [guard, deviceChatsRoute(s)] },
  {
    method: 'get',
    path: '/devices/:deviceId/chats/:chatId/messages',
    handlers: [guard, deviceChatMessagesRoute(s)],
  },
  {
    method: 'post',
    path: '/devices/:deviceId/chats/:chatId/messages',
    handlers: [guard, replyBody(s), deviceChatReplyRoute(s)],
  },
  {
    method: 'post',
    path: '/devices/:deviceId/chats/:chatId/read',
    handlers: [guard, none, deviceChatReadRoute(s)],
  },
];

/** A chat's labels and state: the public label routes' handlers, the device named by the path. */
function chatStateRoutes(
  s: ApiServices,
  guard: RequestHandler,
  body: RequestHandler,
  none: RequestHandler,
): AdminRoute[] {
  const r = labelRoutes(s, deviceIdOf);
  const chat = '/devices/:deviceId/chats/:chatId';
  return [
    { method: 'patch', path: chat, handlers: [guard, body, r.chatState] },
    { method: 'get', path: `${chat}/labels`, handlers: [guard, r.chatLabels] },
    { method: 'post', path: `${chat}/labels`, handlers: [guard, body, r.labelChat] },
    { method: 'delete', path: `${chat}/labels/:labelId`, handlers: [guard, none, r.unlabelChat] },
  ];
}

const chatParams = Joi.object({ chatId: chatIdSchema });
const chatIdOf = (req: Request): string => parse(chatParams, { chatId: req.params.chatId }).chatId as string;

/**
 * A reply's body: as the public /send's (SEND_BODY_LIMIT_BYTES: a 10 MB attachment is ~13.4 MiB of
 * base64), over it the same 413 `ERRORS.bodyTooLarge`; a text of 65,536 characters at 6 bytes each
 * in JSON (`\uXXXX`) fits too.
 */
export const REPLY_BODY_LIMIT_BYTES = SEND_BODY_LIMIT_BYTES;
const replyBody = (s: ApiServices): RequestHandler =>
  jsonBody({
    limitBytes: REPLY_BODY_LIMIT_BYTES,
    tooLargeError: ERRORS.bodyTooLarge,
    // `{ attachment: {…} }`, `{ reaction: {…} }`
    maxDepth: 2,
    maxValues: FIELD_ALLOWANCE,
    idleTimeoutMs: s.config.http.bodyIdleTimeoutMs,
  });

/**
 * `{ text }`, `{ attachment }` (its caption inside it) or `{ reaction: { messageId, emoji } }`:
 * exactly one, each judged by the public /send's own rule (its limits, no lone surrogate; an
 * attachment's url, base64 or mediaId, type, filename, mimeType and caption; one emoji or "").
 */
const sendFields = sendBodySchema(1);
const replyBodySchema = Joi.object<ReplyContent>({
  text: sendFields.extract('text'),
  attachment: sendFields.extract('attachment'),
  reaction: sendFields.extract('reaction'),
})
  .xor('text', 'attachment', 'reaction')
  .messages({
    'object.missing': 'a reply must have text, attachment or reaction',
    'object.xor': 'a reply has only one of text, attachment or reaction',
  });

/**
 * GET /devices/:deviceId/chats — the dashboard's Chats page: the public GET /chats of any device,
 * each chat with its `pinned`, `archived`, `mutedUntil` and `labels` (listChatsWithState).
 */
export function deviceChatsRoute(s: ApiServices): RequestHandler {
  return async (req, res) => {
    const q = parse(chatsQuerySchema, req.query);
    res.status(200).json({ success: true, ...(await listChatsWithState(s, deviceIdOf(req), q)) });
  };
}

/** GET /devices/:deviceId/chats/:chatId/messages — a chat's messages, as the public route pages them. */
export function deviceChatMessagesRoute(s: ApiServices): RequestHandler {
  return async (req, res) => {
    const deviceId = deviceIdOf(req);
    const chatId = chatIdOf(req);
    const q = parse(chatMessagesQuerySchema, req.query);
    // The page script answers whether the device has the chat in the same round trip.
    const page = await listChatMessages(s, deviceId, chatId, q);
    if (!page) throw new ApiError(404, CHAT_ERRORS.notFound);
    res.status(200).json({ success: true, ...page });
  };
}

/**
 * POST /devices/:deviceId/chats/:chatId/messages `{ text }`, `{ attachment }` or `{ reaction }` —
 * the operator's reply or reaction: 202 `{ success, messageId }`, or the public /send's refusal
 * (its status and error: sendAnswer). It counts against no /send rate limit (reply.ts says why).
 */
export function deviceChatReplyRoute(s: ApiServices): RequestHandler {
  return async (req, res) => {
    const deviceId = deviceIdOf(req);
    const chatId = chatIdOf(req);
    parse(emptyQuerySchema, req.query);
    const content = parse(replyBodySchema, req.body ?? {}) as ReplyContent;
    respond(res, sendAnswer(await replyInChat(s, deviceId, chatId, content)));
  };
}

/**
 * POST /devices/:deviceId/chats/:chatId/read — marks the chat read through the device's holder,
 * answered as the public POST /chats/:chatId/read is (200 `{ success, data }`, or its errors).
 */
export function deviceChatReadRoute(s: ApiServices): RequestHandler {
  const holder = { commands: new DeviceCommandClient(s.redis, s.bullRedis), sessions: s.sessions };
  const deps = { chats: s.chats, inbound: s.inbound, metrics: s.metrics, holder };
  return async (req, res) => {
    noQuery(req);
    const deviceId = deviceIdOf(req);
    const data = readAnswer(await readChat(deps, deviceId, chatIdOf(req)));
    res.status(200).json({ success: true, data });
  };
}
