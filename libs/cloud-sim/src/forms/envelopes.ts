/**
 * How Meta wraps what it delivers, beyond one change of one message: several `entry` items,
 * several `changes` per entry, several messages or statuses in one `value`, statuses and messages
 * in one value (https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/overview:
 * "webhooks may be batched"; https://developers.facebook.com/docs/graph-api/webhooks/getting-started:
 * up to 1000 updates in one request), and the other fields of a WhatsApp Business Account that come
 * to the same callback URL, each with its own `value` and no `metadata.phone_number_id`.
 */
import {
  body,
  messagesChange,
  seconds,
  type FormContext,
  type WebhookBody,
  type WebhookChange,
} from './context.js';
import { delivered, read, statusOf } from './statuses.js';
import { contactOf, image, text, userMessage } from './user-messages.js';

/** Two entries in one body, each a change with one text of the user. https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/overview */
export function severalEntries(ctx: FormContext): WebhookBody[] {
  const [a, b] = [text(ctx, 'First entry'), text(ctx, 'Second entry')];
  return [
    {
      object: 'whatsapp_business_account',
      entry: [
        { id: ctx.number.wabaId, changes: [messagesChange(ctx.number, a)] },
        { id: ctx.number.wabaId, changes: [messagesChange(ctx.number, b)] },
      ],
    },
  ];
}

/** One entry with several changes: a text, an image, and the statuses of the business's message. https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/overview */
export const severalChanges = (ctx: FormContext): WebhookBody[] => [
  body(
    ctx.number,
    messagesChange(ctx.number, text(ctx, 'First change')),
    messagesChange(ctx.number, image(ctx, 'Second change')),
    messagesChange(ctx.number, delivered(ctx)),
  ),
];

/** One value with three messages of the user (one `contacts[]` entry) and nothing else. https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/overview */
export function severalMessages(ctx: FormContext): WebhookBody[] {
  const messages = ['One', 'Two', 'Three'].map((t) => userMessage(ctx, 'text', { body: t }));
  return [body(ctx.number, messagesChange(ctx.number, { contacts: [contactOf(ctx.user)], messages }))];
}

/** One value with two statuses of the business's message (delivered, then read). https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/overview */
export const severalStatuses = (ctx: FormContext): WebhookBody[] => [
  body(
    ctx.number,
    messagesChange(ctx.number, { statuses: [...delivered(ctx).statuses, ...read(ctx).statuses] }),
  ),
];

/** One value with statuses and messages side by side. https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/overview */
export function statusesAndMessages(ctx: FormContext): WebhookBody[] {
  const value = text(ctx, 'Thanks, got it');
  return [body(ctx.number, messagesChange(ctx.number, { ...value, statuses: [statusOf(ctx, 'read')] }))];
}

/** The same message delivered again in another body (a retry that Meta re-batched): a new text beside it. */
export function redelivered(ctx: FormContext): WebhookBody[] {
  const first = text(ctx, 'Delivered twice');
  const again = text(ctx, 'Beside the redelivery');
  return [
    body(ctx.number, messagesChange(ctx.number, first)),
    body(
      ctx.number,
      messagesChange(ctx.number, {
        contacts: first.contacts,
        messages: [...first.messages, ...again.messages],
      }),
    ),
  ];
}

// ---- the other fields of the WhatsApp Business Account --------------------------------------------

const REFERENCE =
  'https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference';

/** A change of another field: its own value, no metadata; its entry carries `time`. */
const otherField = (field: string, value: Record<string, unknown>): WebhookChange => ({ value, field });

/** A template was approved, rejected, paused…: `message_template_status_update`. https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/message_template_status_update */
export const templateStatusUpdate = (ctx: FormContext): WebhookChange =>
  otherField('message_template_status_update', {
    event: 'APPROVED',
    message_template_id: 1_234_567_890_123_456,
    message_template_name: 'order_update',
    message_template_language: 'en_US',
    message_template_category: 'UTILITY',
    reason: 'NONE',
    time: Number(seconds(ctx.at)),
  });

/** The number's quality or messaging limit changed: `phone_number_quality_update`. https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/phone_number_quality_update */
export const qualityUpdate = (ctx: FormContext): WebhookChange =>
  otherField('phone_number_quality_update', {
    display_phone_number: ctx.number.displayPhoneNumber.replace(/\D/g, ''),
    event: 'UPGRADE',
    current_limit: 'TIER_10K',
    old_limit: 'TIER_1K',
  });

/** The account was verified, restricted, banned…: `account_update`. https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/account_update */
export const accountUpdate = (ctx: FormContext): WebhookChange =>
  otherField('account_update', {
    phone_number: ctx.number.displayPhoneNumber.replace(/\D/g, ''),
    event: 'VERIFIED_ACCOUNT',
  });

/**
 * A call's status on the `calls` field: it carries `metadata.phone_number_id` and `statuses` like
 * the messages field, of a call (`wacid.…`), not a message. https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/calls
 */
export const callStatus = (ctx: FormContext): WebhookChange => ({
  value: {
    ...messagesChange(ctx.number, {}).value,
    statuses: [
      {
        id: `wacid.${ctx.wamid().slice('wamid.'.length)}`,
        status: 'RINGING',
        timestamp: seconds(ctx.at),
        recipient_id: ctx.user.waId,
        type: 'call',
      },
    ],
  },
  field: 'calls',
});

/** One body of an entry with `time` holding the change of another field. */
export const fieldBody = (ctx: FormContext, change: WebhookChange): WebhookBody[] => [
  {
    object: 'whatsapp_business_account',
    entry: [{ id: ctx.number.wabaId, time: Number(seconds(ctx.at)), changes: [change] }],
  },
];

/** A user's text between changes of other fields in one entry: they must not cost it its delivery. */
export const textAmongOtherFields = (ctx: FormContext): WebhookBody[] => [
  {
    object: 'whatsapp_business_account',
    entry: [
      {
        id: ctx.number.wabaId,
        time: Number(seconds(ctx.at)),
        changes: [
          templateStatusUpdate(ctx),
          messagesChange(ctx.number, text(ctx, 'Between other fields')),
          qualityUpdate(ctx),
          accountUpdate(ctx),
          callStatus(ctx),
        ],
      },
    ],
  },
];

export { REFERENCE as FIELDS_REFERENCE };
