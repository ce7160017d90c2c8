/**
 * Chats, read receipts and calls: the ids, queries, bodies, answers and errors of the chat routes
 * (GET /chats, GET /chats/:chatId/messages, POST /chats/:chatId/read, POST /messages/:id/read),
 * the device's account settings (GET/PATCH /settings: calls, reading) and the call events.
 */
import { Joi } from './text.js';
import type { ContactIdentity } from './contact.js';
import { LID_PATTERN } from './contact.js';
import { GROUP_JID_PATTERN } from './groups.js';
import { PHONE_PATTERN } from './limits.js';

/**
 * A chat's id as the API names it: the contact's phone (digits) for a one-to-one chat, its LID
 * (`<digits>@lid`) when the number is not known, or the group's id (`<digits>@g.us`).
 */
export const CHAT_ID_PATTERN = new RegExp(
  `^(?:${PHONE_PATTERN.source.slice(1, -1)}|${LID_PATTERN.source.slice(1, -1)}|${GROUP_JID_PATTERN.source.slice(1, -1)})$`,
);

export const CHAT_LIMITS = {
  /** Chats a device's chat index keeps (the least recently active go first, with their entries). */
  chats: 5_000,
  /** Message ids one chat keeps (the oldest go first; the records expire on their own). */
  messagesPerChat: 2_000,
  /** Unread inbound messages one chat tracks (and marks read in one request). */
  unreadPerChat: 1_000,
  /** The text a rejected caller is answered with (characters). */
  rejectCallMessage: 1_000,
} as const;

export const CHAT_ERRORS = {
  /** 404: no chat of the device with that id (never one, or it left the chat index). */
  notFound: 'Chat not found',
  /** 404 on POST /messages/:id/read: a message of the device that a contact did not write. */
  notInbound: 'Only a message a contact wrote can be marked read',
  /** 502: WhatsApp refused or failed the read receipt. */
  readFailed: 'The read receipt could not be sent to WhatsApp; try again shortly',
  /** 504: the device's holder did not answer in time. */
  readTimeout: 'The read receipt did not reach WhatsApp in time; try again shortly',
  /** 413 on PATCH /settings. */
  settingsBodyTooLarge: 'Request body too large: settings are limited to 8 KB',
} as const;

export type ChatType = 'direct' | 'group';

/** A chat's last message, in short (the whole of it: GET /chats/:chatId/messages). */
export interface ChatLastMessage {
  messageId: string;
  direction: 'inbound' | 'outbound';
  /** When it was received, or sent. */
  at: string;
  /** The start of its text or caption (100 characters), when it has one. */
  text?: string;
}

/** An entry of GET /chats. */
export interface ChatSummary {
  /** Phone (digits), `<digits>@lid` or the group's `<digits>@g.us`. */
  id: string;
  type: ChatType;
  /** A one-to-one chat's contact, as the device knows it. */
  contact?: ContactIdentity;
  /** A group's subject, as its last message from a member told it. */
  subject?: string;
  /** Inbound messages not marked read (through the API, or automatically). */
  unreadCount: number;
  /** When the last message of the chat was received or sent. */
  lastActivityAt: string;
  lastMessage: ChatLastMessage;
}

export interface ChatsQuery {
  token?: string;
  limit: number;
  cursor?: string;
}

const cursorMessage = { 'string.pattern.base': '"cursor" must be the nextCursor of a previous page' };

/** GET /chats's cursor: `<score>_<chatId>` of the previous page's last chat. */
export const CHATS_CURSOR_PATTERN = /^\d{1,16}_[0-9a-z@.-]{1,64}$/;
/** A chat page's cursor: a place in the chat (1, 2, ... live; a fraction below 1 for history). */
export const CHAT_MESSAGES_CURSOR_PATTERN = /^\d+(\.\d+)?$/;

/** GET /chats: a page size (1–100, default 20) and the cursor of the previous page. */
export const chatsQuerySchema = Joi.object<ChatsQuery>({
  token: Joi.string(),
  limit: Joi.number().integer().min(1).max(100).default(20),
  cursor: Joi.string().max(96).pattern(CHATS_CURSOR_PATTERN).messages(cursorMessage),
});

export interface ChatMessagesQuery {
  token?: string;
  limit: number;
  cursor?: string;
}

/** GET /chats/:chatId/messages: a page size (1–100, default 50) and the cursor of the previous page. */
export const chatMessagesQuerySchema = Joi.object<ChatMessagesQuery>({
  token: Joi.string(),
  limit: Joi.number().integer().min(1).max(100).default(50),
  cursor: Joi.string().max(24).pattern(CHAT_MESSAGES_CURSOR_PATTERN).messages(cursorMessage),
});

export const chatIdSchema = Joi.string().required().pattern(CHAT_ID_PATTERN).messages({
  'string.pattern.base':
    '"chatId" must be a phone number (digits), a LID (<digits>@lid) or a group id (<digits>@g.us)',
});

/** The device's account settings (GET /settings). */
export interface AccountSettings {
  /** Reject every incoming call at once (bots cannot answer calls). Off by default. */
  rejectCalls: boolean;
  /** With `rejectCalls`: the text sent to the caller after a rejected call, through the paced queue. */
  rejectCallMessage: string | null;
  /** Mark every incoming message read as it arrives (read receipts, as the account's privacy allows). Off by default. */
  autoMarkRead: boolean;
  /**
   * Keep the chats and messages WhatsApp's history sync sends a device when it links (bounded by
   * HISTORY_SYNC_MAX_MESSAGES and HISTORY_SYNC_MAX_BYTES). Off by default: set it before linking.
   */
  historySync: boolean;
}

export const ACCOUNT_SETTINGS_DEFAULTS: AccountSettings = {
  rejectCalls: false,
  rejectCallMessage: null,
  autoMarkRead: false,
  historySync: false,
};

/** PATCH /settings: the fields given change, the others stay (null puts one back to its default). */
export const accountSettingsBodySchema = Joi.object<Partial<AccountSettings>>({
  rejectCalls: Joi.boolean().allow(null),
  rejectCallMessage: Joi.string().trim().min(1).max(CHAT_LIMITS.rejectCallMessage).allow(null),
  autoMarkRead: Joi.boolean().allow(null),
  historySync: Joi.boolean().allow(null),
})
  .min(1)
  .messages({
    'object.min': 'name at least one setting: rejectCalls, rejectCallMessage, autoMarkRead or historySync',
  });

/** Answer of POST /chats/:chatId/read and POST /messages/:id/read. */
export interface ReadOutcome {
  /** Messages marked read by this request (already read ones are not counted again). */
  marked: number;
  /**
   * `true`: the contacts were shown the read receipts (blue ticks); `false`: the account's
   * read-receipts privacy is off, so only the account's own devices learnt it (WhatsApp's
   * `read-self`) and the chat's unread count went down all the same.
   */
  receiptsShown: boolean;
  unreadCount: number;
}

/** One message a read receipt names: WhatsApp's key of it. */
export interface ReadKey {
  /** The chat's JID as WhatsApp named it (the contact's phone or LID JID, or the group's). */
  remoteJid: string;
  id: string;
  /** A group message's author JID. */
  participant?: string;
}

/** Ask the device's holder to send read receipts for these messages. */
export interface MarkReadCommand {
  type: 'mark-read';
  deviceId: string;
  requestId: string;
  keys: ReadKey[];
}

/** The holder's answer to a mark-read (in the reply's `data`). */
export interface MarkReadResult {
  receiptsShown: boolean;
}

/** `data` of call.received: a contact is calling the account. */
export interface CallReceivedEventData {
  deviceId: string;
  /** WhatsApp's id of the call (the same on its call.missed / call.ended). */
  callId: string;
  /** The caller's phone, when known. */
  from?: string;
  contact: ContactIdentity;
  video: boolean;
  group: boolean;
  /** A group call's group, when WhatsApp named it. */
  groupId?: string;
  /** `true`: the device's `rejectCalls` setting rejects it now (a call.missed follows). */
  rejecting: boolean;
  offeredAt: string;
}

/** `data` of call.missed (never answered) and call.ended (answered on another device, then ended). */
export interface CallEndedEventData {
  deviceId: string;
  callId: string;
  from?: string;
  contact: ContactIdentity;
  video: boolean;
  group: boolean;
  groupId?: string;
  /**
   * call.missed: `rejected` (by the `rejectCalls` setting), `rejected_elsewhere` (on the phone),
   * `timeout` (nobody answered), `cancelled` (the caller hung up first). call.ended: `ended`.
   */
  reason: 'rejected' | 'rejected_elsewhere' | 'timeout' | 'cancelled' | 'ended';
  /** call.missed with `rejected`: the message id of the text the caller is answered with, if any. */
  replyMessageId?: string;
  offeredAt?: string;
  /** call.ended: when the call was answered (on another of the account's devices). */
  answeredAt?: string;
  endedAt: string;
}
