/**
 * What the statuses of the business's messages look like in the `messages` webhook, one builder
 * per form the status reference allows:
 * https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/status
 *
 * A status names the message (`id`), its `status` (sent, delivered, read, played for a voice
 * message, failed), `timestamp`, `recipient_id` (and `recipient_user_id`, the user's BSUID, when
 * the message went to it), the send's `biz_opaque_callback_data` when it had one, and:
 * - `pricing` — per-message pricing since July 2025 (`pricing_model: 'PMP'`, `type` regular /
 *   free_customer_service / free_entry_point, `category`), or the older conversation-based
 *   pricing (`pricing_model: 'CBP'`, `billable`) with its `conversation` (`id`, `origin.type`,
 *   `expiration_timestamp` on the first status of the conversation);
 * - `errors` instead of pricing when it failed (`code`, `title`, `message`, `error_data.details`).
 * Statuses may arrive out of order, and a `read` may come without a `delivered` before it.
 */
import { seconds, type FormContext } from './context.js';

type Json = Record<string, unknown>;
export type StatusValue = { statuses: Json[] };

/** The status fields every status has, of the message the context names. */
export function statusOf(ctx: FormContext, status: string, extra: Json = {}, withCallback = true): Json {
  const { target } = ctx;
  return {
    id: target.wamid,
    status,
    timestamp: seconds(ctx.at),
    recipient_id: target.recipientId,
    ...(withCallback && target.callbackData !== undefined
      ? { biz_opaque_callback_data: target.callbackData }
      : {}),
    ...extra,
  };
}

/** Per-message pricing (PMP): `type` and `category` of the message. */
const perMessage = (type: string, category: string): Json => ({
  pricing: { billable: type === 'regular', pricing_model: 'PMP', type, category },
});

/** Conversation-based pricing (CBP) with its conversation; `expiration_timestamp` on its first status. */
const perConversation = (ctx: FormContext, category: string, first: boolean): Json => ({
  conversation: {
    id: 'a75d17ad06104c51166f948319b03c6a',
    ...(first ? { expiration_timestamp: seconds(ctx.at + 24 * 3600 * 1000) } : {}),
    origin: { type: category },
  },
  pricing: { billable: true, pricing_model: 'CBP', category },
});

/** `sent` with per-message pricing (a utility template, billed). https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/status */
export const sentPerMessage = (ctx: FormContext): StatusValue => ({
  statuses: [statusOf(ctx, 'sent', perMessage('regular', 'utility'))],
});

/** `sent` with conversation-based pricing: the conversation opened, and when it expires. https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/status */
export const sentPerConversation = (ctx: FormContext): StatusValue => ({
  statuses: [statusOf(ctx, 'sent', perConversation(ctx, 'marketing', true))],
});

/** `delivered` of a reply in a service window: PMP `free_customer_service`, category `service`. https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/status */
export const delivered = (ctx: FormContext): StatusValue => ({
  statuses: [statusOf(ctx, 'delivered', perMessage('free_customer_service', 'service'))],
});

/** `delivered` with the conversation (CBP) but no expiration: a later status of the conversation. https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/status */
export const deliveredPerConversation = (ctx: FormContext): StatusValue => ({
  statuses: [statusOf(ctx, 'delivered', perConversation(ctx, 'utility', false))],
});

/** `read`: no pricing, no conversation. https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/status */
export const read = (ctx: FormContext): StatusValue => ({ statuses: [statusOf(ctx, 'read')] });

/** `played`: the user played a voice message the business sent. https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/status */
export const played = (ctx: FormContext): StatusValue => ({ statuses: [statusOf(ctx, 'played')] });

/** `read` of a message sent to the user's BSUID: `recipient_user_id` beside `recipient_id`. https://developers.facebook.com/documentation/business-messaging/whatsapp/business-scoped-user-ids */
export const readByUserId = (ctx: FormContext): StatusValue => ({
  statuses: [statusOf(ctx, 'read', { recipient_user_id: ctx.user.userId })],
});

/** The `errors` entry of a failed status: `code`, `title`, `message`, `error_data.details`, `href`. */
const failure = (code: number, title: string, details: string): Json => ({
  errors: [
    {
      code,
      title,
      message: title,
      error_data: { details },
      href: 'https://developers.facebook.com/documentation/business-messaging/whatsapp/support/error-codes/',
    },
  ],
});

/** `failed` (131026 undeliverable), with the send's callback data. https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/status */
export const failed = (ctx: FormContext): StatusValue => ({
  statuses: [
    statusOf(
      ctx,
      'failed',
      failure(131026, 'Message undeliverable', 'Message Undeliverable: the recipient is not on WhatsApp.'),
    ),
  ],
});

/** `failed` of the 24-hour window (131047), without `biz_opaque_callback_data`. https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/status */
export const failedWithoutCallback = (ctx: FormContext): StatusValue => ({
  statuses: [
    statusOf(
      ctx,
      'failed',
      failure(
        131047,
        'Re-engagement message',
        'Message failed to send because more than 24 hours have passed.',
      ),
      false,
    ),
  ],
});

/** A status of a message the business never sent (a wamid nobody knows). https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/status */
export const unknownMessage = (ctx: FormContext): StatusValue => ({
  statuses: [
    {
      ...statusOf(
        { ...ctx, target: { wamid: ctx.wamid(), recipientId: ctx.target.recipientId } },
        'delivered',
      ),
    },
  ],
});

/** A message's statuses out of order, one delivery each: `read`, then `delivered`, then `sent`. https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/status */
export const outOfOrder = (ctx: FormContext): StatusValue[] => [
  read(ctx),
  delivered(ctx),
  sentPerMessage(ctx),
];

/** A `read` arriving after the message `failed` (each its own delivery). https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/status */
export const readAfterFailed = (ctx: FormContext): StatusValue[] => [failed(ctx), read(ctx)];
