import { randomBytes, randomUUID } from 'node:crypto';

/** Our message id (returned by /send and /otp). A UUID: no ':' so it is a valid BullMQ job id. */
export function newMessageId(): string {
  return randomUUID();
}

/**
 * The WhatsApp message id, decided when the job is created so that a retried job re-sends the
 * same message (WhatsApp and the recipient de-duplicate by id) instead of a second one.
 * Same shape as Baileys' generateMessageIDV2: "3EB0" + 18 upper-case hex digits.
 */
export function newPlatformMessageId(): string {
  return '3EB0' + randomBytes(9).toString('hex').toUpperCase();
}

/** Token ids shown by the token CLI (never the token value). */
export function newTokenId(): string {
  return 'tok_' + randomBytes(6).toString('hex');
}

/** API token values: 32 random bytes, URL-safe. */
export function newTokenValue(): string {
  return 'mgw_' + randomBytes(32).toString('base64url');
}
