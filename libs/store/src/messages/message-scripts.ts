import { storeScript } from '../lua.js';
import type { CapName } from '../policy/admission.js';

/**
 * The scripts of the message store (`lua/message-*.lua`). Each runs atomically on keys of one
 * device (one hash tag), which is what makes "settle exactly once" and "expire only if unclaimed"
 * hold under concurrent senders, receipts and API calls; the same logic as GET-then-SET would race.
 */

/** How a claim of a message ended (`CLAIM`): its answer, what the message store's callers read. */
export type ClaimOutcome =
  | 'claimed'
  | 'sent'
  | 'failed'
  | 'deleted'
  | 'expired'
  | 'cancelled'
  | 'paused'
  | 'restricted'
  /** A pooled message moved to another device of its pool: that device sends it. */
  | 'moved'
  /** An earlier attempt may have written it, and the engine has no idempotency key (`once`). */
  | 'unknown';
/** A claim that takes the caps' unit too (MessageStore.claimAdmitted): or the cap used up. */
export type AdmittedClaim = ClaimOutcome | CapName;

/**
 * A message's status transition; it emits the message's events and moves its batch's counts with
 * the change (`lua/message-transition-7.lua`, its body `lua/includes/message-transition.lua`).
 * Returns 1 when the record changed, 0 when not, -1 when refused as claimed.
 */
export const TRANSITION = storeScript<number>('message-transition-7');

/**
 * A receipt's transition, by the message's WhatsApp id (`lua/message-receipt-7.lua`): one call
 * instead of a read and then the transition. Returns -2 when the WhatsApp id is not ours.
 */
export const RECEIPT = storeScript<number | [impliedDelivery: '0' | '1', traceparent: string]>(
  'message-receipt-7',
);

/**
 * Marks that a send attempt starts; reads the batch's and the device's pause in the same step, so
 * a cancel's answer "none of them will be sent" holds (`lua/message-claim-6.lua`).
 */
export const CLAIM = storeScript<ClaimOutcome>('message-claim-6');

/**
 * The claim, taking the message's unit of the device's caps in the same step: one round trip
 * instead of the admission's and the claim's in a row (`lua/message-claim-admit-8.lua`).
 */
export const CLAIM_ADMIT = storeScript<[AdmittedClaim, 0 | 1]>('message-claim-admit-8');

/** Records why a queued message waits, in its batch's held set too (`lua/message-hold-3.lua`). */
export const HOLD = storeScript<number>('message-hold-3');

/**
 * How a claimed attempt ended without the message being sent: it may have reached the socket
 * (begun, for good) or certainly did not (the claim goes) (`lua/message-attempt-end-1.lua`).
 */
export const ATTEMPT_END = storeScript<number>('message-attempt-end-1');
