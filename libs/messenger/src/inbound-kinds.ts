import type { proto, WAMessage } from '@whiskeysockets/baileys';
import {
  KIND_LIMITS,
  parseVCard,
  type ContactCard,
  type ContactIdentity,
  type LocationInput,
} from '@mgw/contracts';
import { chatJids, chatIdentity, type EncryptedPollVote } from './message-kinds.js';

/** The kinds a contact's message may carry besides text and media (see parseInbound). */
export interface InboundKindFields {
  /** Who wrote (phone and/or LID), as events name contacts. */
  contact?: ContactIdentity;
  location?: LocationInput;
  contacts?: ContactCard[];
  /** A reaction on a message of the chat (`emoji: ""`: removed). Not a message of its own. */
  reaction?: { targetPlatformMessageId: string; emoji: string };
  /** A vote on one of our polls, still encrypted (the poll's secret is in the store). Not a message of its own. */
  pollVote?: EncryptedPollVote;
}

const cut = (value: string | null | undefined, max: number): string | undefined =>
  value ? value.slice(0, max) : undefined;

/** A finite coordinate in range, or undefined. */
const coordinate = (value: unknown, limit: number): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) && Math.abs(value) <= limit ? value : undefined;

/**
 * The kind fields of an incoming message: a location, contact cards (read from their vCards,
 * at most KIND_LIMITS.contacts), a reaction, an encrypted poll vote. Undefined for anything else.
 * Whatever a phone sends is bounded here: strings cut, coordinates checked.
 */
export function parseInboundKind(msg: WAMessage, content: proto.IMessage): InboundKindFields | undefined {
  const contact = chatIdentity(chatJids(msg.key));
  const loc = content.locationMessage ?? content.liveLocationMessage;
  if (loc) {
    const latitude = coordinate(loc.degreesLatitude, 90);
    const longitude = coordinate(loc.degreesLongitude, 180);
    if (latitude === undefined || longitude === undefined) return undefined;
    const named = content.locationMessage ?? undefined;
    const name = cut(named?.name, KIND_LIMITS.locationName);
    const address = cut(named?.address, KIND_LIMITS.locationAddress);
    return {
      contact,
      location: { latitude, longitude, ...(name ? { name } : {}), ...(address ? { address } : {}) },
    };
  }
  const vcards = content.contactMessage
    ? [content.contactMessage]
    : (content.contactsArrayMessage?.contacts ?? []).slice(0, KIND_LIMITS.contacts);
  if (vcards.length > 0) {
    const contacts = vcards
      .map((c) => {
        const card = parseVCard(c.vcard ?? '');
        return card && !card.name && c.displayName ? { ...card, name: c.displayName } : card;
      })
      .filter((c): c is ContactCard => c !== undefined);
    return contacts.length > 0 ? { contact, contacts } : undefined;
  }
  const react = content.reactionMessage;
  if (react?.key?.id) {
    const emoji = (react.text ?? '').slice(0, KIND_LIMITS.emojiChars);
    return { contact, reaction: { targetPlatformMessageId: react.key.id, emoji } };
  }
  const update = content.pollUpdateMessage;
  const vote = update?.vote;
  if (update?.pollCreationMessageKey?.id && vote?.encPayload && vote.encIv) {
    return {
      contact,
      pollVote: {
        pollPlatformMessageId: update.pollCreationMessageKey.id,
        encPayload: vote.encPayload,
        encIv: vote.encIv,
        voterJids: chatJids(msg.key),
      },
    };
  }
  return undefined;
}

/**
 * When the contact sent it, to the millisecond, from WhatsApp's stamp in whole seconds: the
 * arrival's milliseconds when it arrives within that second, so it sorts after what the device
 * sent or received earlier in the second; the second's last millisecond when it arrives later
 * (offline delivery, a slow link, history), so it never sorts before a message of the same second
 * that arrived first; the stamp when it arrives before its second (a clock ahead); now when it
 * has no stamp.
 */
export function kindReceivedAt(msg: WAMessage, now = Date.now()): Date {
  const ts = Number(msg.messageTimestamp ?? 0);
  if (!(ts > 0)) return new Date(now);
  const stamped = ts * 1000;
  return new Date(Math.min(Math.max(now, stamped), stamped + 999));
}
