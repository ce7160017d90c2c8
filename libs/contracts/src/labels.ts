/**
 * WhatsApp Business labels as events: a label created, renamed, recoloured or deleted (on the
 * phone or another linked device) is `label.edited`; a chat given or relieved of a label is
 * `label.association`. They travel between the account's devices as app-state patches, like a
 * chat's archive, pin and mute (PATCH /chats/:chatId), and are changed through the device's socket.
 */
import { Joi } from './text.js';

/** A label as WhatsApp keeps it. */
export interface Label {
  id: string;
  name: string;
  /** One of WhatsApp's 20 label colours (0-19). */
  color: number;
  deleted: boolean;
  /** One of WhatsApp's predefined labels (New customer, New order…), when it is one. */
  predefinedId?: string;
}

/** `data` of a `label.edited` event. */
export interface LabelEditedEventData {
  deviceId: string;
  label: Label;
}

/** `data` of a `label.association` event. */
export interface LabelAssociationEventData {
  deviceId: string;
  labelId: string;
  /** The chat: a phone number, a `<digits>@lid`, or a group id (`<id>@g.us`). */
  chat: string;
  /** true: the chat got the label; false: it lost it. */
  labeled: boolean;
}

/**
 * `data` of a `chat.updated` event: a chat's archive, pin or mute changed (app-state sync), each
 * field only when it changed.
 */
export interface ChatUpdatedEventData {
  deviceId: string;
  /** The chat: a phone number, a `<digits>@lid`, or a group id (`<id>@g.us`). */
  chat: string;
  archived?: boolean;
  pinned?: boolean;
  /** Muted until then (ISO); null: not muted (any more). */
  mutedUntil?: string | null;
}

/** WhatsApp's label colours: 0-19. */
export const LABEL_COLOR_MAX = 19;
/** A label id as WhatsApp keeps them (digits). */
export const LABEL_ID_PATTERN = /^\d{1,10}$/;
/** A chat in a path: a phone number, a `<digits>@lid`, or a group id. */
/** The longest mute the API sets (a year); WhatsApp's own choices are 8 hours, a week, always. */
export const MUTE_MAX_SECONDS = 365 * 24 * 3600;

/** How much of the account's labels a device keeps (libs/store labels/label-store.ts). */
export const LABEL_LIMITS = {
  /** Labels per device (WhatsApp Business allows 20; the bound leaves room). */
  labels: 100,
  /** Chats per label. */
  chatsPerLabel: 5_000,
  /** Chat ids per page of GET /labels/:labelId/chats. */
  pageMax: 1_000,
  pageDefault: 500,
} as const;

/** A label in GET /labels: what the device learned, with how many chats carry it. */
export interface LabelListed {
  id: string;
  name: string;
  color: number;
  predefinedId?: string;
  chats: number;
}

/** GET /labels/:labelId/chats: a page of the label's chats, in lexical order. */
export interface LabelChatsQuery {
  limit: number;
  after?: string;
}

export const labelChatsQuerySchema = Joi.object<LabelChatsQuery>({
  limit: Joi.number().integer().min(1).max(LABEL_LIMITS.pageMax).default(LABEL_LIMITS.pageDefault),
  after: Joi.string().min(1).max(128),
});

/** POST /labels. */
export interface LabelCreateBody {
  name: string;
  color: number;
}

export const labelCreateBodySchema = Joi.object<LabelCreateBody>({
  name: Joi.string()
    .min(1)
    .max(100)
    .pattern(/\S/)
    .displayName()
    .required()
    .messages({ 'string.pattern.base': '"name" must not be blank' }),
  color: Joi.number().integer().min(0).max(LABEL_COLOR_MAX).default(0),
});

/** PATCH /labels/:labelId: the fields given change. */
export interface LabelUpdateBody {
  name?: string;
  color?: number;
}

export const labelUpdateBodySchema = Joi.object<LabelUpdateBody>({
  name: Joi.string()
    .min(1)
    .max(100)
    .pattern(/\S/)
    .displayName()
    .messages({ 'string.pattern.base': '"name" must not be blank' }),
  color: Joi.number().integer().min(0).max(LABEL_COLOR_MAX),
})
  .or('name', 'color')
  .messages({ 'object.missing': 'the body must change at least one of "name", "color"' });

/** POST /chats/:chatId/labels. */
export interface ChatLabelBody {
  labelId: string;
}

export const chatLabelBodySchema = Joi.object<ChatLabelBody>({
  labelId: Joi.string()
    .pattern(LABEL_ID_PATTERN)
    .required()
    .messages({ 'string.pattern.base': '"labelId" must be a label id (digits)' }),
});

/** PATCH /chats/:chatId: the chat's state on the account's devices. */
export interface ChatStateBody {
  archived?: boolean;
  pinned?: boolean;
  muted?: boolean;
  /** How long a mute lasts (seconds); 8 hours when absent. */
  muteSeconds?: number;
}

export const chatStateBodySchema = Joi.object<ChatStateBody>({
  archived: Joi.boolean().strict(),
  pinned: Joi.boolean().strict(),
  muted: Joi.boolean().strict(),
  muteSeconds: Joi.number().integer().min(60).max(MUTE_MAX_SECONDS),
})
  .or('archived', 'pinned', 'muted')
  .messages({ 'object.missing': 'the body must change at least one of "archived", "pinned", "muted"' });

export const labelIdParamSchema = Joi.string()
  .pattern(LABEL_ID_PATTERN)
  .required()
  .messages({ 'string.pattern.base': '"labelId" must be a label id (digits)' });

export type LabelCommand =
  | { type: 'app-state-label'; deviceId: string; requestId: string; label: Label }
  | {
      type: 'app-state-chat-label';
      deviceId: string;
      requestId: string;
      chat: string;
      labelId: string;
      labeled: boolean;
    }
  | { type: 'app-state-chat'; deviceId: string; requestId: string; chat: string; state: ChatStateBody };

export type LabelCommandResult = { label: Label } | { chat: string; applied: true };

/** The label and chat-state routes' errors (besides the common ones). */
export const LABEL_ERRORS = {
  /** 409: WhatsApp has not given this device the key app-state patches are made with yet. */
  noKey: 'The device has no app-state key yet: open WhatsApp on the phone and try again shortly',
  /** 404 */
  unknownLabel: 'Unknown label',
  /** 502 */
  failed: 'The request to WhatsApp failed; try again shortly',
  /** 504 */
  timeout: 'The request to WhatsApp did not finish in time; try again shortly',
} as const;
