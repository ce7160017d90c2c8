import type { RequestHandler } from 'express';
import { Joi } from '@mgw/contracts';
import { CHAT_ERRORS, chatIdSchema, chatMessagesQuerySchema, chatsQuerySchema } from '@mgw/contracts';
import type { ApiServices } from '../../api-services.js';
import { ApiError } from '../../http/api-error.js';
import { parse } from '../../http/validation.js';
import { listChatMessages, listChats } from '../../features/chats/list-chats.js';
import { deviceIdOf, type AdminMount } from '../admin-routes.js';

/** The device's chats and a chat's messages (the Chats page), as the public GET /chats…. */
export const chats: AdminMount = ({ s, guard }) => [
  { method: 'get', path: '/devices/:deviceId/chats', handlers: [guard, deviceChatsRoute(s)] },
  {
    method: 'get',
    path: '/devices/:deviceId/chats/:chatId/messages',
    handlers: [guard, deviceChatMessagesRoute(s)],
  },
];

const chatParams = Joi.object({ chatId: chatIdSchema });

/** GET /devices/:deviceId/chats — the dashboard's Chats page: the public GET /chats of any device. */
export function deviceChatsRoute(s: ApiServices): RequestHandler {
  return async (req, res) => {
    const q = parse(chatsQuerySchema, req.query);
    res.status(200).json({ success: true, ...(await listChats(s, deviceIdOf(req), q)) });
  };
}

/** GET /devices/:deviceId/chats/:chatId/messages — a chat's messages, as the public route pages them. */
export function deviceChatMessagesRoute(s: ApiServices): RequestHandler {
  return async (req, res) => {
    const deviceId = deviceIdOf(req);
    const { chatId } = parse(chatParams, { chatId: req.params.chatId });
    const q = parse(chatMessagesQuerySchema, req.query);
    // The page script answers whether the device has the chat in the same round trip.
    const page = await listChatMessages(s, deviceId, chatId, q);
    if (!page) throw new ApiError(404, CHAT_ERRORS.notFound);
    res.status(200).json({ success: true, ...page });
  };
}
