/**
 * The control API's history-sync route (history-sync.ts): the phone sends the account's linked
 * devices chats and messages as history, as it does right after a device links. The body is
 * checked field by field (400 with what is wrong), within bounds a phone's chunk keeps.
 */
import { SimError } from './sim-error.js';
import { HISTORY_FORMS, type HistoryForm } from './forms.js';
import { checkAttachmentInput, type InboundAttachment } from './inbound-content.js';
import {
  HISTORY_SYNC_TYPES,
  sendHistorySync,
  type HistoryConversationInput,
  type HistoryMessageInput,
  type HistorySyncContext,
  type HistorySyncInput,
  type HistorySyncKind,
} from './history-sync.js';

type Body = Record<string, unknown>;
type Handler = (body: Body, params: string[]) => unknown;

const MAX_CONVERSATIONS = 200;
const MAX_MESSAGES = 5_000;
const MAX_TEXT = 4_096;
/** Bytes of attachments (base64) one history sync carries: a test's files, not a phone's backup. */
const MAX_ATTACHMENT_BASE64 = 8 * 1024 * 1024;
const MAX_NAME = 100;
/** Unix seconds up to 2106 (a uint32, as WhatsApp's timestamps are). */
const MAX_AT = 0xffff_ffff;
const PHONE = /^[0-9]{5,24}$/;
const LID = /^[0-9]{5,24}@lid$/;
const GROUP = /^[0-9]{5,24}(-[0-9]{5,24})?@g\.us$/;
const MESSAGE_ID = /^[0-9A-Za-z]{1,64}$/;

const isObject = (v: unknown): v is Body => !!v && typeof v === 'object' && !Array.isArray(v);

function intIn(value: unknown, name: string, min: number, max: number): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max)
    throw new SimError(`${name} must be an integer ${min}-${max}`, 400);
  return value;
}

function message(m: unknown, where: string, isGroup: boolean, budget: Budget): HistoryMessageInput {
  if (!isObject(m)) throw new SimError(`${where} must be an object`, 400);
  if (typeof m.fromMe !== 'boolean') throw new SimError(`${where}.fromMe must be true or false`, 400);
  const attachment = m.attachment as InboundAttachment | undefined;
  if (attachment !== undefined) {
    checkAttachmentInput(attachment, `${where}.attachment`);
    budget.attachmentChars += attachment.base64.length;
    if (budget.attachmentChars > MAX_ATTACHMENT_BASE64)
      throw new SimError(
        `at most ${MAX_ATTACHMENT_BASE64} base64 characters of attachments per history sync`,
        400,
      );
  }
  if (attachment === undefined || m.text !== undefined)
    if (typeof m.text !== 'string' || !m.text || m.text.length > MAX_TEXT)
      throw new SimError(`${where}.text must be a string of 1-${MAX_TEXT} characters`, 400);
  const at = intIn(m.at, `${where}.at`, 1, MAX_AT);
  if (at === undefined) throw new SimError(`${where}.at is required (unix seconds)`, 400);
  if (m.id !== undefined && (typeof m.id !== 'string' || !MESSAGE_ID.test(m.id)))
    throw new SimError(`${where}.id must be 1-64 letters or digits`, 400);
  if (m.author !== undefined && (typeof m.author !== 'string' || !PHONE.test(m.author)))
    throw new SimError(`${where}.author must be phone digits`, 400);
  if (m.author !== undefined && (!isGroup || m.fromMe))
    throw new SimError(`${where}.author is only for a member's group message`, 400);
  if (isGroup && !m.fromMe && m.author === undefined)
    throw new SimError(`${where}.author is required for a member's group message`, 400);
  return {
    fromMe: m.fromMe,
    ...(m.text !== undefined ? { text: m.text as string } : {}),
    ...(attachment ? { attachment } : {}),
    at,
    ...(m.id !== undefined ? { id: m.id as string } : {}),
    ...(m.author !== undefined ? { author: m.author as string } : {}),
  };
}

interface Budget {
  messages: number;
  attachmentChars: number;
}

function conversation(c: unknown, where: string, budget: Budget): HistoryConversationInput {
  if (!isObject(c)) throw new SimError(`${where} must be an object`, 400);
  const chat = c.with;
  if (typeof chat !== 'string' || !(PHONE.test(chat) || LID.test(chat) || GROUP.test(chat)))
    throw new SimError(`${where}.with must be phone digits, <digits>@lid or <id>@g.us`, 400);
  if (c.name !== undefined && (typeof c.name !== 'string' || c.name.length > MAX_NAME))
    throw new SimError(`${where}.name must be a string of at most ${MAX_NAME} characters`, 400);
  const unreadCount = intIn(c.unreadCount, `${where}.unreadCount`, 0, MAX_MESSAGES);
  if (!Array.isArray(c.messages)) throw new SimError(`${where}.messages must be an array`, 400);
  budget.messages += c.messages.length;
  if (budget.messages > MAX_MESSAGES)
    throw new SimError(`at most ${MAX_MESSAGES} messages per history sync`, 400);
  const isGroup = GROUP.test(chat);
  const messages = c.messages.map((m, i) => message(m, `${where}.messages[${i}]`, isGroup, budget));
  const ids = messages.flatMap((m) => (m.id ? [m.id] : []));
  if (new Set(ids).size !== ids.length) throw new SimError(`${where} repeats a message id`, 400);
  return {
    with: chat,
    ...(c.name ? { name: c.name as string } : {}),
    ...(unreadCount !== undefined ? { unreadCount } : {}),
    messages,
  };
}

/** The body of `POST /accounts/:phone/history-sync`, checked; SimError 400 for mistakes. */
export function checkHistorySyncInput(b: Body): HistorySyncInput {
  if (b.syncType !== undefined && !HISTORY_SYNC_TYPES.includes(b.syncType as HistorySyncKind))
    throw new SimError(`syncType must be one of ${HISTORY_SYNC_TYPES.join(', ')}`, 400);
  const chunkOrder = intIn(b.chunkOrder, 'chunkOrder', 0, 1_000_000);
  const progress = intIn(b.progress, 'progress', 0, 100);
  if (!Array.isArray(b.conversations)) throw new SimError('conversations must be an array', 400);
  if (b.conversations.length > MAX_CONVERSATIONS)
    throw new SimError(`at most ${MAX_CONVERSATIONS} conversations per history sync`, 400);
  const budget: Budget = { messages: 0, attachmentChars: 0 };
  const conversations = b.conversations.map((c, i) => conversation(c, `conversations[${i}]`, budget));
  const chats = new Set(conversations.map((c) => c.with));
  if (chats.size !== conversations.length) throw new SimError('a conversation is given twice', 400);
  if (b.form !== undefined && !HISTORY_FORMS.includes(b.form as HistoryForm))
    throw new SimError(`form must be one of ${HISTORY_FORMS.join(', ')}`, 400);
  if (b.withoutSalt !== undefined && typeof b.withoutSalt !== 'boolean')
    throw new SimError('withoutSalt must be true or false', 400);
  return {
    ...(b.form !== undefined ? { form: b.form as HistoryForm } : {}),
    ...(b.withoutSalt ? { withoutSalt: true } : {}),
    ...(b.syncType !== undefined ? { syncType: b.syncType as HistorySyncKind } : {}),
    ...(chunkOrder !== undefined ? { chunkOrder } : {}),
    ...(progress !== undefined ? { progress } : {}),
    conversations,
  };
}

export function historyRoutes(sim: HistorySyncContext): Array<[string, RegExp, Handler]> {
  return [
    [
      'POST',
      /^\/accounts\/([^/]+)\/history-sync$/,
      (b, [phone]) => {
        const account = sim.directory.get(phone!);
        if (!account) throw new SimError(`unknown account ${phone}`, 404);
        return sendHistorySync(sim, account, checkHistorySyncInput(b));
      },
    ],
  ];
}
