import { Joi } from './text.js';
import type { ContactIdentity } from './contact.js';
import { PHONE_PATTERN } from './limits.js';
import type { ContactCard } from './vcard.js';
import type { TemplateInput } from './cloud.js';
import { templateSchema } from './templates.js';

/**
 * The message kinds a /send may carry instead of `text`/`attachment` (one per message): a
 * reaction, a location, contact cards, a poll, a template (Cloud API devices only: templates.ts).
 * The message record keeps the request's field under the same name and shape (sealed like text);
 * a poll's record adds `tally` and `votes`.
 */
export const MESSAGE_KINDS = ['reaction', 'location', 'contacts', 'poll', 'template'] as const;
export type MessageKind = (typeof MESSAGE_KINDS)[number];

/** The API's errors of the kinds (`error` of their 4xx answers). */
export const KIND_ERRORS = {
  /** 404: `reaction.messageId` is no message of this device. */
  reactionTargetNotFound: 'The message to react to was not found',
  /** 409: the message reacted to failed: WhatsApp never had it. */
  reactionTargetFailed: 'The message to react to was never sent',
} as const;

/** Bounds of the kinds' fields (characters, counts), near WhatsApp's own. */
export const KIND_LIMITS = {
  emojiChars: 32,
  locationName: 256,
  locationAddress: 512,
  contacts: 10,
  contactName: 256,
  contactPhones: 5,
  email: 254,
  organization: 256,
  pollQuestion: 255,
  pollOptions: { min: 2, max: 12 },
  pollOption: 100,
  messageId: 128,
} as const;

export interface ReactionInput {
  /** Our messageId of the message reacted to (one we sent, or one a contact sent us). */
  messageId: string;
  /** One emoji; `""` removes our reaction. */
  emoji: string;
}

export interface LocationInput {
  latitude: number;
  longitude: number;
  name?: string;
  address?: string;
}

export interface PollInput {
  question: string;
  options: string[];
  /** More than one option may be chosen (default false: one). */
  multiple: boolean;
}

/** One option's votes in a poll's record. */
export interface PollTallyEntry {
  option: string;
  votes: number;
}

/** One contact's current vote on a poll (its latest; `options: []` withdrew it). */
export interface PollVoteEntry {
  contact: ContactIdentity;
  options: string[];
  at: string;
}

/** A reaction a contact put on one of the device's messages (shown on that message's record). */
export interface ReceivedReaction {
  contact: ContactIdentity;
  emoji: string;
  at: string;
}

/** The message a reaction is on, as WhatsApp names it: its id, and whether we sent it. */
export interface ReactionTarget {
  platformMessageId: string;
  fromMe: boolean;
  /** A group member's message: the JID of the member who wrote it (its key names it). */
  participant?: string;
}

/** The kind fields of a stored request (`MessageContent`) and of a record (GET /messages/:id). */
export interface MessageKindContent {
  reaction?: ReactionInput;
  location?: LocationInput;
  contacts?: ContactCard[];
  poll?: PollInput;
  /** An approved template of a Cloud API number (an OTP's carries the code: see kindFieldsOf). */
  template?: TemplateInput;
  /** Phones or LIDs a text or caption mentions (kept on the record with the kind fields; no kind). */
  mentions?: string[];
}

/** What a message record shows of its kind (request shape, plus a poll's tally and a message's received reactions). */
export interface MessageKindFields {
  reaction?: ReactionInput;
  location?: LocationInput;
  contacts?: ContactCard[];
  poll?: PollInput & { tally: PollTallyEntry[]; votes: PollVoteEntry[] };
  /** The template sent (an OTP's: its name and language only, never the code). */
  template?: TemplateInput;
  reactions?: ReceivedReaction[];
  /** A text or caption we sent with mentions: whom it mentioned. */
  mentions?: string[];
}

/** The kind of a stored request's content, if it has one. */
export function messageKindOf(content: MessageKindContent): MessageKind | undefined {
  return MESSAGE_KINDS.find((k) => content[k] !== undefined);
}

/**
 * The kind fields of a content, alone (what a record keeps). An OTP's template keeps its name and
 * language only: its parameters are the code, which leaves Redis with the OTP's content, as a
 * linked OTP's text does.
 */
export function kindFieldsOf(content: MessageKindContent & { otp?: unknown }): MessageKindContent {
  const out: MessageKindContent = {};
  if (content.reaction) out.reaction = content.reaction;
  if (content.location) out.location = content.location;
  if (content.contacts) out.contacts = content.contacts;
  if (content.poll) out.poll = content.poll;
  if (content.template)
    out.template = content.otp
      ? { name: content.template.name, language: content.template.language }
      : content.template;
  if (content.mentions?.length) out.mentions = content.mentions;
  return out;
}

// Graphemes: one user-perceived character (a flag, a skin tone, a ZWJ family are each one).
const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
const EMOJI_CHAR = /\p{Extended_Pictographic}|\p{Regional_Indicator}|\u20E3/u;

/** `""` (removal) or one emoji grapheme of at most KIND_LIMITS.emojiChars UTF-16 units. */
export function isReactionEmoji(value: string): boolean {
  if (value === '') return true;
  if (value.length > KIND_LIMITS.emojiChars || !EMOJI_CHAR.test(value)) return false;
  let count = 0;
  for (const _ of graphemes.segment(value)) if (++count > 1) return false;
  return count === 1;
}

/** Text without control characters (line breaks included): names, questions, options. */
// eslint-disable-next-line no-control-regex -- control characters are what it refuses
const NO_CONTROL = /^[^\x00-\x1F\x7F-\x9F]*$/;
const line = (max: number) =>
  Joi.string()
    .trim()
    .min(1)
    .max(max)
    .pattern(NO_CONTROL)
    .messages({ 'string.pattern.base': '{{#label}} must not contain control characters or line breaks' });

/** How the schemas name the emoji rule (its `custom` rule's description; see the OpenAPI document). */
export const EMOJI_RULE = 'one emoji, or "" to remove the reaction';

export const reactionSchema = Joi.object<ReactionInput>({
  messageId: Joi.string()
    .min(1)
    .max(KIND_LIMITS.messageId)
    .required()
    .description(
      'Our messageId of the message reacted to: one this device sent or received, in the chat of `to`.',
    ),
  emoji: Joi.string()
    .allow('')
    .max(KIND_LIMITS.emojiChars)
    .custom(
      (value: string, helpers) =>
        isReactionEmoji(value)
          ? value
          : helpers.message({
              custom: '{{#label}} must be one emoji, or an empty string to remove the reaction',
            }),
      EMOJI_RULE,
    )
    .required(),
}).description('A reaction to a message (Choice: docs/message-kinds.md#reaction).');

export const locationSchema = Joi.object<LocationInput>({
  latitude: Joi.number().min(-90).max(90).required(),
  longitude: Joi.number().min(-180).max(180).required(),
  name: line(KIND_LIMITS.locationName),
  address: line(KIND_LIMITS.locationAddress),
}).description('A location (degrees, WGS 84) with an optional place name and address.');

/** An e-mail address, loosely (local@domain.tld, no spaces or control characters). */
// eslint-disable-next-line no-control-regex -- control characters are what it refuses
const EMAIL_PATTERN = /^[^\s@\x00-\x1F\x7F]+@[^\s@\x00-\x1F\x7F]+\.[^\s@\x00-\x1F\x7F]+$/;

const contactPhone = Joi.string().pattern(PHONE_PATTERN).messages({
  'string.pattern.base': '{{#label}} must be a phone number in international format: digits only, 7 to 15',
});

export const contactsSchema = Joi.array()
  .items(
    Joi.object<ContactCard>({
      // A name (text.ts): no controls, and no bidi or invisible characters either.
      name: Joi.string().trim().min(1).max(KIND_LIMITS.contactName).displayName().required(),
      phones: Joi.array().items(contactPhone).min(1).max(KIND_LIMITS.contactPhones).unique().required(),
      email: Joi.string()
        .max(KIND_LIMITS.email)
        .pattern(EMAIL_PATTERN)
        .messages({ 'string.pattern.base': '{{#label}} must be an e-mail address' }),
      organization: line(KIND_LIMITS.organization),
    }),
  )
  .min(1)
  .max(KIND_LIMITS.contacts)
  .description('Contact cards; the gateway builds their vCards (every value escaped).');

export const pollSchema = Joi.object<PollInput>({
  question: line(KIND_LIMITS.pollQuestion).required(),
  options: Joi.array()
    .items(line(KIND_LIMITS.pollOption))
    .min(KIND_LIMITS.pollOptions.min)
    .max(KIND_LIMITS.pollOptions.max)
    .unique()
    .required()
    .messages({ 'array.unique': '{{#label}} lists the same option twice' }),
  multiple: Joi.boolean().default(false).description('More than one option may be chosen.'),
}).description('A poll; votes come back decrypted (poll.vote events, `poll.tally` on the record).');

/** The content fields a kind may not be combined with (one content kind per message; edits and deletes are kinds too). */
export const KIND_EXCLUSIONS: Record<MessageKind, string[]> = {
  reaction: ['text', 'attachment', 'edit', 'delete', 'location', 'contacts', 'poll', 'existingMessageId'],
  location: ['text', 'attachment', 'edit', 'delete', 'contacts', 'poll'],
  contacts: ['text', 'attachment', 'edit', 'delete', 'poll'],
  poll: ['text', 'attachment', 'edit', 'delete'],
  // A template is the whole message: its text is the template's, with its parameters.
  template: [
    'text',
    'attachment',
    'edit',
    'delete',
    'reaction',
    'location',
    'contacts',
    'poll',
    'mentions',
    'linkPreview',
  ],
};

/** `data` of message.reaction: a contact reacted to a message (`emoji: ""`: it removed its reaction). */
export interface MessageReactionEventData {
  deviceId: string;
  /** Our messageId of the message reacted to, when the device has it. */
  messageId?: string;
  /** The WhatsApp id of the message reacted to. */
  targetPlatformMessageId: string;
  /** The WhatsApp id of the reaction. */
  platformMessageId: string;
  contact: ContactIdentity;
  emoji: string;
  reactedAt: string;
}

/** `data` of poll.vote: a contact voted on one of our polls (`options: []`: it withdrew its vote). */
export interface PollVoteEventData {
  deviceId: string;
  /** Our messageId of the poll. */
  messageId: string;
  /** The WhatsApp id of the vote. */
  platformMessageId: string;
  contact: ContactIdentity;
  options: string[];
  /** The poll's tally after this vote. */
  tally: PollTallyEntry[];
  votedAt: string;
}

/** The kinds' fields of the /send body schema (concatenated to it), one content kind per message. */
export const messageKindsSchema = MESSAGE_KINDS.reduce(
  (schema, kind) => schema.without(kind, KIND_EXCLUSIONS[kind]),
  Joi.object({
    reaction: reactionSchema,
    location: locationSchema,
    contacts: contactsSchema,
    poll: pollSchema,
    template: templateSchema,
  }),
).messages({
  'object.without': '{{#mainWithLabel}} cannot be sent with {{#peerWithLabel}}: one content kind per message',
});
