import type { Request, RequestHandler } from 'express';
import { Joi } from '@mgw/contracts';
import {
  CHAT_ERRORS,
  ERRORS,
  accountSettingsBodySchema,
  chatIdSchema,
  chatMessagesQuerySchema,
  chatsQuerySchema,
  type MarkReadResult,
  type ReadKey,
  type ReadOutcome,
} from '@mgw/contracts';
import { DeviceCommandClient, readAccountSettings, writeAccountSettings } from '@mgw/store';
import type { ApiServices } from '../api-services.js';
import { askHolder } from '../features/holder/ask-holder.js';
import { ApiError } from '../http/api-error.js';
import { authOf } from '../http/auth.js';
import { NO_DEVICE, answer, type HolderErrors } from '../http/holder-errors.js';
import { noQuery } from '../http/route-helpers.js';
import { parse } from '../http/validation.js';
import { listChatMessages, listChats } from '../read/chats.js';
import { ownMessage } from '../features/messages/mount.js';

/** How long the API waits for the device's holder to send the read receipts. */
const READ_RECEIPTS_WAIT_SECONDS = 15;

/** How a mark-read ask fails in HTTP. */
const READ_HOLDER_ERRORS: HolderErrors = {
  no_device: NO_DEVICE,
  timeout: { status: 504, error: CHAT_ERRORS.readTimeout },
  not_connected: NO_DEVICE,
  failed: { status: 502, error: CHAT_ERRORS.readFailed },
};

const chatParams = Joi.object({ chatId: chatIdSchema });

/**
 * The chat routes: the device's chats and a chat's messages (from its chat index, no WhatsApp
 * round trip), marking a chat or a message read (read receipts: only the holder of the device has
 * its socket, so it is asked through a device command, as the group routes do), and the device's
 * account settings (calls rejected automatically, incoming messages marked read automatically).
 */
export function chatRoutes(s: ApiServices) {
  const holder = { commands: new DeviceCommandClient(s.redis, s.bullRedis), sessions: s.sessions };
  const chatId = (req: Request) => parse(chatParams, { chatId: req.params.chatId }).chatId;

  /** The chat, or 404 when the device has none of that id. */
  async function ownChat(deviceId: string, id: string) {
    const chat = await s.chats.get(deviceId, id);
    if (!chat) throw new ApiError(404, CHAT_ERRORS.notFound);
    return chat;
  }

  /**
   * Sends read receipts for `ids` (unread inbound messages of the chat) through the holder, then
   * takes them out of the chat's unread set. Nothing is marked when the receipts did not go.
   */
  async function markRead(deviceId: string, chat: string, ids: string[], extra: ReadKey[] = []) {
    const targets = await Promise.all(ids.map((id) => s.inbound.readTarget(deviceId, id)));
    const readKeys = [...targets.flatMap((t) => (t ? [t.key] : [])), ...extra];
    let receiptsShown = true;
    if (readKeys.length) {
      // A reply that does not say whether the receipts were shown counts as shown.
      const data = answer(
        await askHolder<MarkReadResult | undefined>(
          holder,
          deviceId,
          { type: 'mark-read', keys: readKeys },
          { wait: READ_RECEIPTS_WAIT_SECONDS, okWithoutData: true },
        ),
        READ_HOLDER_ERRORS,
      );
      receiptsShown = data?.receiptsShown ?? true;
    }
    const { marked, unread } = await s.chats.markRead(deviceId, chat, ids);
    s.metrics.readReceipts.inc({ how: 'request', shown: receiptsShown ? 'shown' : 'self' }, marked);
    return { marked, receiptsShown, unreadCount: unread } satisfies ReadOutcome;
  }

  const list: RequestHandler = async (req, res) => {
    const q = parse(chatsQuerySchema, req.query);
    res.status(200).json({ success: true, data: await listChats(s, authOf(res).deviceId, q) });
  };
  const messages: RequestHandler = async (req, res) => {
    const { deviceId } = authOf(res);
    const id = chatId(req);
    const q = parse(chatMessagesQuerySchema, req.query);
    // The page script answers whether the device has the chat (as ownChat) in the same round trip.
    const page = await listChatMessages(s, deviceId, id, q);
    if (!page) throw new ApiError(404, CHAT_ERRORS.notFound);
    res.status(200).json({ success: true, data: page });
  };
  const readChat: RequestHandler = async (req, res) => {
    noQuery(req);
    const { deviceId } = authOf(res);
    const id = chatId(req);
    await ownChat(deviceId, id);
    const unread = await s.chats.unread(deviceId, id);
    res.status(200).json({ success: true, data: { chatId: id, ...(await markRead(deviceId, id, unread)) } });
  };
  const readMessage: RequestHandler = async (req, res) => {
    noQuery(req);
    const { deviceId } = authOf(res);
    const messageId = String(req.params.id ?? '');
    const record = await ownMessage(s, deviceId, messageId);
    if (record.direction !== 'inbound') throw new ApiError(404, CHAT_ERRORS.notInbound);
    const target = await s.inbound.readTarget(deviceId, messageId);
    if (!target) throw new ApiError(404, ERRORS.messageNotFound);
    // Reading a message reads the unread ones before it in its chat too (as opening the chat does).
    const unread = await s.chats.unread(deviceId, target.chatId, messageId);
    // Read already (or past the chat's unread bound): its receipt goes again, harmlessly.
    const extra = unread.includes(messageId) ? [] : [target.key];
    const outcome = await markRead(deviceId, target.chatId, unread, extra);
    res.status(200).json({ success: true, data: { messageId, chatId: target.chatId, ...outcome } });
  };
  const getSettings: RequestHandler = async (req, res) => {
    noQuery(req);
    const data = await readAccountSettings(s.redis, s.encryption, authOf(res).deviceId);
    res.status(200).json({ success: true, data });
  };
  const patchSettings: RequestHandler = async (req, res) => {
    noQuery(req);
    const change = parse(accountSettingsBodySchema, req.body ?? {});
    const data = await writeAccountSettings(s.redis, s.encryption, authOf(res).deviceId, change);
    res.status(200).json({ success: true, data });
  };
  return { list, messages, readChat, readMessage, getSettings, patchSettings };
}
