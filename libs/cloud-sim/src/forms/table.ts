/**
 * Every form of the `whatsapp_business_account` webhook the simulator writes, by name: what a
 * test asks the simulator to deliver (`deliverForm`, `POST /control/numbers/{id}/forms/{name}`)
 * and what a matrix test iterates (`WEBHOOK_FORMS`). Each row names Meta's reference page it
 * follows; its builder (user-messages.ts, statuses.ts, envelopes.ts) cites the same.
 */
import { MESSAGES_REFERENCE, body, messagesChange, type FormContext, type WebhookBody } from './context.js';
import * as envelopes from './envelopes.js';
import * as statuses from './statuses.js';
import * as user from './user-messages.js';

/** What a form is about: a message of the user, a status of the business's message, or the envelope. */
export type FormGroup = 'message' | 'status' | 'envelope' | 'field';

export interface WebhookForm {
  /** `<group>.<what>`, e.g. `message.image`, `status.failed`, `field.account_update`. */
  name: string;
  group: FormGroup;
  /** What it is, in a line. */
  about: string;
  /** Meta's reference page it follows. */
  reference: string;
  /** Its bodies, delivered one after another. */
  build(ctx: FormContext): WebhookBody[];
}

const STATUS = `${MESSAGES_REFERENCE}/status`;
const USERNAMES =
  'https://developers.facebook.com/documentation/business-messaging/whatsapp/business-scoped-user-ids';
const OVERVIEW =
  'https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/overview';

/** One body holding one `messages` change with this value. */
const one =
  (value: (ctx: FormContext) => Record<string, unknown>) =>
  (ctx: FormContext): WebhookBody[] => [body(ctx.number, messagesChange(ctx.number, value(ctx)))];
/** One body per value, in order. */
const each =
  (values: (ctx: FormContext) => Record<string, unknown>[]) =>
  (ctx: FormContext): WebhookBody[] =>
    values(ctx).map((v) => body(ctx.number, messagesChange(ctx.number, v)));

type Row = [name: string, about: string, reference: string, build: WebhookForm['build']];

const MESSAGES: Row[] = [
  ['message.text', 'a text', `${MESSAGES_REFERENCE}/text`, one(user.text)],
  [
    'message.text.no-profile-name',
    'a text, its contact without a profile name',
    `${MESSAGES_REFERENCE}/text`,
    one(user.textWithoutProfileName),
  ],
  [
    'message.text.no-contacts',
    'a text with no contacts array',
    `${MESSAGES_REFERENCE}/text`,
    one(user.textWithoutContacts),
  ],
  [
    'message.text.reply',
    'a reply (context.from and context.id)',
    `${MESSAGES_REFERENCE}/text`,
    one(user.textReply),
  ],
  [
    'message.text.forwarded',
    'a forwarded text (context.forwarded)',
    `${MESSAGES_REFERENCE}/text`,
    one(user.textForwarded),
  ],
  [
    'message.text.frequently-forwarded',
    'a text forwarded many times',
    `${MESSAGES_REFERENCE}/text`,
    one(user.textFrequentlyForwarded),
  ],
  [
    'message.text.ad-referral',
    'a text from a Click to WhatsApp ad (referral)',
    `${MESSAGES_REFERENCE}/text`,
    one(user.textFromAd),
  ],
  [
    'message.text.product-inquiry',
    'a text about a catalog item (context.referred_product)',
    `${MESSAGES_REFERENCE}/text`,
    one(user.textProductInquiry),
  ],
  [
    'message.text.identity',
    'a text with identity (identity change check)',
    `${MESSAGES_REFERENCE}/text`,
    one(user.textWithIdentity),
  ],
  [
    'message.text.username',
    'a text from a user with a username, phone shared',
    USERNAMES,
    one(user.textWithUsername),
  ],
  [
    'message.text.no-phone',
    'a text from a user whose phone number is not shared',
    USERNAMES,
    one(user.textWithoutPhone),
  ],
  [
    'message.text.before-user-ids',
    'a text as written before BSUIDs (no user_id)',
    `${MESSAGES_REFERENCE}/text`,
    one(user.textBeforeUserIds),
  ],
  ['message.image', 'an image with a caption', `${MESSAGES_REFERENCE}/image`, one((c) => user.image(c))],
  [
    'message.image.no-caption',
    'an image without a caption',
    `${MESSAGES_REFERENCE}/image`,
    one((c) => user.image(c, undefined)),
  ],
  ['message.video', 'a video with a caption', `${MESSAGES_REFERENCE}/video`, one(user.video)],
  [
    'message.audio',
    'an audio file (voice: false)',
    `${MESSAGES_REFERENCE}/audio`,
    one((c) => user.audio(c, false)),
  ],
  [
    'message.audio.voice',
    'a voice message (voice: true)',
    `${MESSAGES_REFERENCE}/audio`,
    one((c) => user.audio(c, true)),
  ],
  [
    'message.document',
    'a document with a filename and a caption',
    `${MESSAGES_REFERENCE}/document`,
    one(user.document),
  ],
  ['message.sticker', 'a still sticker', `${MESSAGES_REFERENCE}/sticker`, one((c) => user.sticker(c, false))],
  [
    'message.sticker.animated',
    'an animated sticker',
    `${MESSAGES_REFERENCE}/sticker`,
    one((c) => user.sticker(c, true)),
  ],
  [
    'message.location',
    'a named location with an address',
    `${MESSAGES_REFERENCE}/location`,
    one((c) => user.location(c, true)),
  ],
  [
    'message.location.bare',
    'a location without name or address',
    `${MESSAGES_REFERENCE}/location`,
    one((c) => user.location(c, false)),
  ],
  [
    'message.contacts',
    'contact cards (several cards and phones, with and without wa_id)',
    `${MESSAGES_REFERENCE}/contacts`,
    one(user.contactCards),
  ],
  [
    'message.reaction',
    'a reaction to a message of the business',
    `${MESSAGES_REFERENCE}/reaction`,
    one((c) => user.reaction(c, '👍')),
  ],
  [
    'message.reaction.removed',
    'a reaction removed (empty emoji)',
    `${MESSAGES_REFERENCE}/reaction`,
    one((c) => user.reaction(c, '')),
  ],
  [
    'message.reaction.removed-no-emoji',
    'a reaction removed (emoji omitted)',
    `${MESSAGES_REFERENCE}/reaction`,
    one((c) => user.reaction(c, undefined)),
  ],
  [
    'message.interactive.button-reply',
    'a reply button tapped (button_reply)',
    `${MESSAGES_REFERENCE}/interactive`,
    one(user.buttonReply),
  ],
  [
    'message.interactive.list-reply',
    'a list row chosen (list_reply)',
    `${MESSAGES_REFERENCE}/interactive`,
    one(user.listReply),
  ],
  [
    'message.interactive.flow-reply',
    'a flow completed (nfm_reply)',
    `${MESSAGES_REFERENCE}/interactive`,
    one(user.flowReply),
  ],
  [
    'message.interactive.address-reply',
    'an address message answered (nfm_reply)',
    `${MESSAGES_REFERENCE}/interactive`,
    one(user.addressReply),
  ],
  [
    'message.interactive.call-permission-reply',
    'a call permission answered',
    `${MESSAGES_REFERENCE}/interactive`,
    one(user.callPermissionReply),
  ],
  [
    'message.button',
    "a template's quick-reply button tapped (payload + text)",
    `${MESSAGES_REFERENCE}/button`,
    one(user.templateButton),
  ],
  ['message.order', 'an order from the catalog', `${MESSAGES_REFERENCE}/order`, one(user.order)],
  [
    'message.system.user-changed-number',
    'the user changed their phone number',
    `${MESSAGES_REFERENCE}/system`,
    one((c) => user.system(c, 'user_changed_number')),
  ],
  [
    'message.system.user-changed-user-id',
    "the user's BSUID changed",
    `${MESSAGES_REFERENCE}/system`,
    one((c) => user.system(c, 'user_changed_user_id')),
  ],
  [
    'message.unsupported',
    'a message type the Cloud API does not support (131051)',
    `${MESSAGES_REFERENCE}/unsupported`,
    one(user.unsupported),
  ],
  [
    'message.unknown',
    'an unsupported message as earlier payloads wrote it (type unknown)',
    `${MESSAGES_REFERENCE}/unsupported`,
    one(user.unknownType),
  ],
  [
    'message.request-welcome',
    'the user opened a chat for the first time',
    MESSAGES_REFERENCE,
    one(user.requestWelcome),
  ],
  ['message.group', 'a text in a group (group_id)', `${MESSAGES_REFERENCE}/group`, one(user.groupText)],
];

const STATUSES: Row[] = [
  [
    'status.sent.per-message',
    'sent, per-message pricing (PMP, regular, utility)',
    STATUS,
    one(statuses.sentPerMessage),
  ],
  [
    'status.sent.per-conversation',
    'sent, conversation-based pricing (CBP) with its conversation',
    STATUS,
    one(statuses.sentPerConversation),
  ],
  ['status.delivered', 'delivered, PMP free_customer_service', STATUS, one(statuses.delivered)],
  [
    'status.delivered.per-conversation',
    'delivered, CBP conversation without expiration',
    STATUS,
    one(statuses.deliveredPerConversation),
  ],
  ['status.read', 'read, no pricing', STATUS, one(statuses.read)],
  ['status.played', 'played (a voice message)', STATUS, one(statuses.played)],
  ['status.read.user-id', 'read, with recipient_user_id (BSUID)', USERNAMES, one(statuses.readByUserId)],
  ['status.failed', 'failed (131026) with error_data.details', STATUS, one(statuses.failed)],
  [
    'status.failed.no-callback',
    'failed (131047) without biz_opaque_callback_data',
    STATUS,
    one(statuses.failedWithoutCallback),
  ],
  [
    'status.unknown-message',
    'a status of a wamid the business never sent',
    STATUS,
    one(statuses.unknownMessage),
  ],
  ['status.out-of-order', 'read, then delivered, then sent', STATUS, each(statuses.outOfOrder)],
  ['status.read-after-failed', 'failed, then read', STATUS, each(statuses.readAfterFailed)],
];

const ENVELOPES: Row[] = [
  ['envelope.several-entries', 'two entries in one body', OVERVIEW, envelopes.severalEntries],
  [
    'envelope.several-changes',
    'one entry, three changes (text, image, status)',
    OVERVIEW,
    envelopes.severalChanges,
  ],
  ['envelope.several-messages', 'three messages in one value', OVERVIEW, envelopes.severalMessages],
  ['envelope.several-statuses', 'two statuses in one value', OVERVIEW, envelopes.severalStatuses],
  [
    'envelope.statuses-and-messages',
    'statuses and messages in one value',
    OVERVIEW,
    envelopes.statusesAndMessages,
  ],
  ['envelope.redelivered', 'a message delivered again in another body', OVERVIEW, envelopes.redelivered],
  [
    'envelope.among-other-fields',
    "a text between other fields' changes in one entry",
    OVERVIEW,
    envelopes.textAmongOtherFields,
  ],
];

const FIELDS: Row[] = [
  [
    'field.message_template_status_update',
    'a template approved',
    `${envelopes.FIELDS_REFERENCE}/message_template_status_update`,
    (c) => envelopes.fieldBody(c, envelopes.templateStatusUpdate(c)),
  ],
  [
    'field.phone_number_quality_update',
    "the number's limit upgraded",
    `${envelopes.FIELDS_REFERENCE}/phone_number_quality_update`,
    (c) => envelopes.fieldBody(c, envelopes.qualityUpdate(c)),
  ],
  [
    'field.account_update',
    'the account verified',
    `${envelopes.FIELDS_REFERENCE}/account_update`,
    (c) => envelopes.fieldBody(c, envelopes.accountUpdate(c)),
  ],
  [
    'field.calls',
    "a call's status (statuses of a wacid, on the calls field)",
    `${envelopes.FIELDS_REFERENCE}/calls`,
    (c) => envelopes.fieldBody(c, envelopes.callStatus(c)),
  ],
];

const rows = (group: FormGroup, list: Row[]): WebhookForm[] =>
  list.map(([name, about, reference, build]) => ({ name, group, about, reference, build }));

/** Every form, in a stable order: messages, statuses, envelopes, other fields. */
export const WEBHOOK_FORMS: readonly WebhookForm[] = Object.freeze([
  ...rows('message', MESSAGES),
  ...rows('status', STATUSES),
  ...rows('envelope', ENVELOPES),
  ...rows('field', FIELDS),
]);

export function webhookForm(name: string): WebhookForm | undefined {
  return WEBHOOK_FORMS.find((f) => f.name === name);
}
