/**
 * The webhook payloads of the `messages` field, pure:
 * - the envelope: `{ object: 'whatsapp_business_account', entry: [{ id: <waba id>, changes: [{ value:
 *   { messaging_product, metadata: { display_phone_number, phone_number_id }, … }, field: 'messages' }] }] }`
 *   (https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages);
 * - statuses: `statuses: [{ id, status, timestamp, recipient_id, biz_opaque_callback_data?, pricing?,
 *   errors? }]`
 *   (https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/status);
 * - inbound messages: `contacts: [{ profile: { name }, wa_id }], messages: [{ from, id, timestamp,
 *   type: 'text', text: { body }, context? }]`.
 */
import type { GraphError } from './errors.js';

export interface NumberIdentity {
  id: string;
  wabaId: string;
  displayPhoneNumber: string;
}

const seconds = (ms: number) => String(Math.floor(ms / 1000));
const digits = (phone: string) => phone.replace(/\D/g, '');

export function envelope(number: NumberIdentity, value: Record<string, unknown>) {
  return {
    object: 'whatsapp_business_account',
    entry: [
      {
        id: number.wabaId,
        changes: [
          {
            value: {
              messaging_product: 'whatsapp',
              metadata: {
                display_phone_number: digits(number.displayPhoneNumber),
                phone_number_id: number.id,
              },
              ...value,
            },
            field: 'messages',
          },
        ],
      },
    ],
  };
}

/**
 * One status of a sent message. `pricing` follows per-message pricing (`pricing_model: 'PMP'`,
 * category `service` in a window or the template's); the deprecated `conversation` object is
 * left out (README). A failed status carries `errors` instead.
 */
export function statusValue(
  message: { id: string; waId: string; pricingCategory: string; callbackData?: string },
  status: string,
  at: number,
  failure?: GraphError,
) {
  const entry: Record<string, unknown> = {
    id: message.id,
    status,
    timestamp: seconds(at),
    recipient_id: message.waId,
  };
  // The send's `biz_opaque_callback_data` comes back in every status of the message.
  if (message.callbackData !== undefined) entry.biz_opaque_callback_data = message.callbackData;
  if (failure) entry.errors = [failure.webhookEntry()];
  else entry.pricing = { billable: true, pricing_model: 'PMP', category: message.pricingCategory };
  return { statuses: [entry] };
}

export function inboundValue(
  number: NumberIdentity,
  input: { id: string; from: string; name: string; text: string; at: number; replyTo?: string | undefined },
) {
  return {
    contacts: [{ profile: { name: input.name }, wa_id: input.from }],
    messages: [
      {
        from: input.from,
        id: input.id,
        timestamp: seconds(input.at),
        type: 'text',
        text: { body: input.text },
        ...(input.replyTo ? { context: { from: digits(number.displayPhoneNumber), id: input.replyTo } } : {}),
      },
    ],
  };
}
