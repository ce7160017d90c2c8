/**
 * The fields of an outbound message's record that its sending keeps: why it waits (`held`),
 * whether its send began (`sendBegan`) and through which engine (`engine`), and its retry receipts
 * (`retries`).
 */
import { DEVICE_ENGINES, HELD_REASONS } from '@mgw/contracts';
import type { JsonSchema } from './joi-schema.js';
import { closed, int, timestamp } from './schema-helpers.js';

export const messageDeliveryProperties: Record<string, JsonSchema> = {
  held: {
    ...closed(
      {
        reason: {
          enum: [...HELD_REASONS],
          description:
            'Why it waits: `daily_cap`, `warmup_cap` (the warm-up step of the day), `first_contact_cap`, `quiet_hours`, `device_paused` (WhatsApp pushed back), `batch_paused` (its list is paused), `scheduled` (its `sendAt`).',
        },
        until: timestamp(
          'When the sender looks at it again (the hold ends: the window, quiet hours or the pause end); for `batch_paused`, when the sender looks at the list again — a resume wakes it at once.',
        ),
      },
      ['reason', 'until'],
    ),
    description:
      'Only while `queued`: the sender holds it back (no attempt used) and why. Absent once its send starts or it fails: a queued message without `held` is waiting for its turn.',
  },
  sendBegan: {
    type: 'boolean',
    description:
      'Outbound, once an attempt was made: true when one may have handed it to WhatsApp (or one is under way, or it was sent); false while every attempt ended before that (not connected, closed before the write, refused with an error ack). A pooled message whose send began never moves; see docs/architecture.md "When a send began".',
  },
  engine: {
    enum: [...DEVICE_ENGINES],
    description:
      "Outbound, with `sendBegan`: the engine of the device that attempted it, `linked` (the linked-device protocol) or `cloud` (the Cloud API; docs/cloud-api.md). An OTP a linked device's pool sent through its Cloud API device (`otpFallback`) says `cloud`.",
  },
  retries: {
    ...closed(
      {
        asked: int('Retry receipts: how often the recipient asked for it again.'),
        answered: int('How often the gateway re-sent it in answer (at most MESSAGE_RETRY_MAX).'),
        lastAt: timestamp('The last ask or re-send.'),
        undecryptableAt: timestamp(
          'When the asks reached MESSAGE_RETRY_MAX with no delivery receipt (`message.undecryptable`); the status stays `sent`.',
        ),
      },
      ['asked', 'answered'],
    ),
    description:
      'Outbound: the recipient\'s phone could not decrypt it and asked for it again (retry receipts); absent when it never asked. See docs/events.md "Retry receipts".',
  },
};
