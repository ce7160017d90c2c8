import type { ReadKey } from '@mgw/contracts';
import type { WASocket } from './socket.js';

/**
 * How long the account's read-receipts privacy, as last asked, is trusted by automatic reads.
 * Baileys keeps what it read for the socket's whole life; the account may switch the setting on
 * its phone meanwhile, so it is asked again at most this often (one `privacy` query). A read the
 * API asked for asks every time (`maxAgeMs` 0): it is an explicit act, and rare.
 */
export const PRIVACY_FRESH_MS = 60_000;

const askedAt = new WeakMap<WASocket, number>();

/**
 * Sends read receipts for messages contacts wrote, as the account's privacy allows: with read
 * receipts on, the contacts see them (`read`); with them off, WhatsApp's `read-self` tells only
 * the account's own devices (the phone's chat is read, the contact sees no blue ticks). Baileys'
 * `readMessages` makes that choice from the privacy settings; they are fetched again first when
 * older than `maxAgeMs`. Answers whether the contacts were shown the receipts.
 */
export async function sendReadReceipts(
  sock: WASocket,
  keys: readonly ReadKey[],
  maxAgeMs: number = PRIVACY_FRESH_MS,
  now = Date.now(),
): Promise<boolean> {
  const fresh = now - (askedAt.get(sock) ?? 0) < maxAgeMs;
  const privacy = await sock.fetchPrivacySettings(!fresh);
  if (!fresh) askedAt.set(sock, now);
  await sock.readMessages(
    keys.map((k) => ({
      remoteJid: k.remoteJid,
      id: k.id,
      fromMe: false,
      ...(k.participant ? { participant: k.participant } : {}),
    })),
  );
  return privacy.readreceipts === 'all';
}
