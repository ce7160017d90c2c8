import type { Request, RequestHandler, Response } from 'express';
import {
  CHAT_ERRORS,
  ERRORS,
  Joi,
  accountSettingsBodySchema,
  chatIdSchema,
  chatMessagesQuerySchema,
  chatsQuerySchema,
} from '@mgw/contracts';
import { readAccountSettings, writeAccountSettings } from '@mgw/store';
import type { Uses } from '../../api-services.js';
import { ApiError } from '../../http/api-error.js';
import { authOf } from '../../http/auth.js';
import { NO_DEVICE, answer, type HolderErrors } from '../../http/holder-errors.js';
import { deviceIdOf, noQuery } from '../../http/route-helpers.js';
import { FIELD_ALLOWANCE, feature, type BodySpec } from '../../http/route-table.js';
import { parse } from '../../http/validation.js';
import { chatAdminHandlers, chatAdminRoutes, type ChatAdminName } from './admin.js';
import { listChatMessages, listChats, type ChatListServices } from './list-chats.js';
import { chatOperations, chatSchemas, chatAdminOperations, chatAdminSchemas } from './openapi.js';
import { readChat, type ReadChatOutcome } from './read-chat.js';
import { readMessage, type ReadMessageOutcome } from './read-message.js';

/** PATCH /settings: three fields, the longest a text of 1,000 characters. */
export const SETTINGS_BODY_LIMIT_BYTES = 8 * 1024;
const settingsBody: BodySpec = {
  json: {
    limitBytes: SETTINGS_BODY_LIMIT_BYTES,
    tooLargeError: CHAT_ERRORS.settingsBodyTooLarge,
    maxValues: FIELD_ALLOWANCE,
  },
};

/** The public routes' handlers, each the key of its OpenAPI operation (openapi.ts). */
export type ChatName = 'list' | 'messages' | 'readChat' | 'readMessage' | 'getSettings' | 'patchSettings';

/**
 * Chats and their messages, read receipts, and the account's reading settings
 * (docs/chats-and-calls.md); the admin API's Chats page (admin.ts).
 */
export const chats = feature<ChatName, ChatAdminName>({
  name: 'chats',
  routes: [
    { method: 'get', path: '/chats', limit: 'messages', handler: 'list' },
    { method: 'get', path: '/chats/:chatId/messages', limit: 'messages', handler: 'messages' },
    { method: 'post', path: '/chats/:chatId/read', limit: 'messages', body: 'none', handler: 'readChat' },
    { method: 'post', path: '/messages/:id/read', limit: 'messages', body: 'none', handler: 'readMessage' },
    { method: 'get', path: '/settings', limit: 'webhook', handler: 'getSettings' },
    { method: 'patch', path: '/settings', limit: 'webhook', body: settingsBody, handler: 'patchSettings' },
    ...chatAdminRoutes,
  ],
  handlers: (s) => ({
    ...chatRoutes(s),
    // The admin API's: its own lists and reply, and the mark-read for the device its path names.
    ...chatAdminHandlers(s, chatRoutes(s, deviceIdOf)),
  }),
  operations: chatOperations,
  schemas: chatSchemas,
  adminOperations: chatAdminOperations,
  adminSchemas: chatAdminSchemas,
});

/** How a mark-read ask fails in HTTP. */
const READ_HOLDER_ERRORS: HolderErrors = {
  no_device: NO_DEVICE,
  timeout: { status: 504, error: CHAT_ERRORS.readTimeout },
  not_connected: NO_DEVICE,
  failed: { status: 502, error: CHAT_ERRORS.readFailed },
};

/** The answer's `data` of a mark-read, or the contract's error for why nothing was marked. */
function readAnswer(outcome: ReadChatOutcome | ReadMessageOutcome): object {
  if (outcome.ok) return outcome.data;
  switch (outcome.reason) {
    case 'unknown_chat':
      throw new ApiError(404, CHAT_ERRORS.notFound);
    case 'unknown_message':
      throw new ApiError(404, ERRORS.messageNotFound);
    case 'not_inbound':
      throw new ApiError(404, CHAT_ERRORS.notInbound);
    default:
      return answer<never>(outcome, READ_HOLDER_ERRORS);
  }
}

const chatParams = Joi.object({ chatId: chatIdSchema });

/**
 * The chat routes: the device's chats and a chat's messages (from its chat index, no WhatsApp
 * round trip: read/chats.ts), marking a chat or a message read (read receipts through the holder
 * of the device: read-chat.ts, read-message.ts), and the device's account settings (calls
 * rejected automatically, incoming messages marked read automatically; kept in the store). The
 * admin API serves the mark-read of a chat too (admin.ts), with the device named by the path.
 */
function chatRoutes(
  s: ChatListServices & Uses<'commands' | 'sessions' | 'metrics'>,
  /** The device a request acts on: the token's (public API), or the path's (admin API). */
  deviceOf: (req: Request, res: Response) => string = (_req, res) => authOf(res).deviceId,
): Record<ChatName, RequestHandler> {
  const holder = { commands: s.commands, sessions: s.sessions };
  const deps = { chats: s.chats, inbound: s.inbound, metrics: s.metrics, messages: s.messages, holder };
  const chatId = (req: Request) => parse(chatParams, { chatId: req.params.chatId }).chatId;
  const ok = (res: Response, data: unknown) => res.status(200).json({ success: true, data });

  const list: RequestHandler = async (req, res) => {
    const q = parse(chatsQuerySchema, req.query);
    ok(res, await listChats(s, deviceOf(req, res), q));
  };
  const messages: RequestHandler = async (req, res) => {
    const deviceId = deviceOf(req, res);
    const id = chatId(req);
    const q = parse(chatMessagesQuerySchema, req.query);
    // The page script answers whether the device has the chat in the same round trip.
    const page = await listChatMessages(s, deviceId, id, q);
    if (!page) throw new ApiError(404, CHAT_ERRORS.notFound);
    ok(res, page);
  };
  const readChatRoute: RequestHandler = async (req, res) => {
    noQuery(req);
    const deviceId = deviceOf(req, res);
    ok(res, readAnswer(await readChat(deps, deviceId, chatId(req))));
  };
  const readMessageRoute: RequestHandler = async (req, res) => {
    noQuery(req);
    const deviceId = deviceOf(req, res);
    ok(res, readAnswer(await readMessage(deps, deviceId, String(req.params.id ?? ''))));
  };
  const getSettings: RequestHandler = async (req, res) => {
    noQuery(req);
    ok(res, await readAccountSettings(s.redis, s.encryption, deviceOf(req, res)));
  };
  const patchSettings: RequestHandler = async (req, res) => {
    noQuery(req);
    const change = parse(accountSettingsBodySchema, req.body ?? {});
    ok(res, await writeAccountSettings(s.redis, s.encryption, deviceOf(req, res), change));
  };
  return {
    list,
    messages,
    readChat: readChatRoute,
    readMessage: readMessageRoute,
    getSettings,
    patchSettings,
  };
}
