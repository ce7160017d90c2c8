import { createHash } from 'node:crypto';
import { decryptPollVote, type AnyMessageContent, type WAMessageKey } from '@whiskeysockets/baileys';
import {
  buildVCard,
  type ContactCard,
  type LocationInput,
  type PollInput,
  type ReactionTarget,
  isLidAddress,
  isPersonAddress,
  phoneOfJid,
  toUserJid,
} from '@mgw/contracts';

/** A message kind as the sender puts it on the socket (see @mgw/contracts message-kinds). */
export type OutgoingKind =
  | { type: 'reaction'; emoji: string; target: ReactionTarget }
  | { type: 'location'; location: LocationInput }
  | { type: 'contacts'; contacts: ContactCard[] }
  | { type: 'poll'; poll: PollInput; secret: Buffer };

/** What Baileys sends for a kind: a reaction to the chat's message, a location, vCards, a poll. */
export function kindMessageContent(jid: string, kind: OutgoingKind): AnyMessageContent {
  switch (kind.type) {
    case 'reaction':
      return {
        react: {
          text: kind.emoji,
          key: {
            remoteJid: jid,
            fromMe: kind.target.fromMe,
            id: kind.target.platformMessageId,
            ...(kind.target.participant ? { participant: kind.target.participant } : {}),
          },
        },
      };
    case 'location': {
      const { latitude, longitude, name, address } = kind.location;
      return {
        location: {
          degreesLatitude: latitude,
          degreesLongitude: longitude,
          ...(name !== undefined ? { name } : {}),
          ...(address !== undefined ? { address } : {}),
        },
      };
    }
    case 'contacts': {
      const cards = kind.contacts.map((c) => ({ displayName: c.name, vcard: buildVCard(c) }));
      const displayName = cards.length === 1 ? cards[0]!.displayName : `${cards.length} contacts`;
      return { contacts: { displayName, contacts: cards } };
    }
    case 'poll':
      // One choice: WhatsApp's single-select poll (V3); several: any number of the options (0).
      return {
        poll: {
          name: kind.poll.question,
          values: kind.poll.options,
          selectableCount: kind.poll.multiple ? 0 : 1,
          messageSecret: kind.secret,
        },
      };
  }
}

/** How a vote names an option: the SHA-256 of the option's text. */
export function pollOptionHash(option: string): string {
  return createHash('sha256').update(Buffer.from(option)).digest('hex');
}

/** An encrypted poll vote as it arrived, with every JID its voter may have encrypted it under. */
export interface EncryptedPollVote {
  pollPlatformMessageId: string;
  encPayload: Uint8Array;
  encIv: Uint8Array;
  /** The voter's JIDs (phone number and LID, normalised) as the message named them. */
  voterJids: string[];
}

/**
 * Opens a poll vote (Baileys' decryptPollVote: a key derived from the poll's messageSecret, the
 * poll's id, its creator's and the voter's JIDs; AES-256-GCM). The JIDs are those WhatsApp chose
 * (phone number or LID addressing): each pair of ours and the voter's is tried. Answers the
 * selected options' hashes, or undefined when none opens it (not our poll's secret, or tampered).
 */
export function openPollVote(
  vote: EncryptedPollVote,
  secret: Buffer,
  creatorJids: readonly string[],
): string[] | undefined {
  for (const pollCreatorJid of creatorJids) {
    for (const voterJid of vote.voterJids) {
      try {
        const opened = decryptPollVote(
          { encPayload: vote.encPayload, encIv: vote.encIv },
          { pollCreatorJid, pollMsgId: vote.pollPlatformMessageId, pollEncKey: secret, voterJid },
        );
        return (opened.selectedOptions ?? []).map((o) => Buffer.from(o).toString('hex'));
      } catch {
        // the next pair of JIDs
      }
    }
  }
  return undefined;
}

/** Our own JIDs (phone number and LID, without device) as a poll's creator. */
export function ownJids(user: { id?: string; lid?: string } | undefined): string[] {
  return [user?.id, user?.lid]
    .filter((j): j is string => Boolean(j))
    .filter(isPersonAddress)
    .map((j) => toUserJid(j)!);
}

/** The normalised user JIDs of a message's chat (phone number and LID, as its key names them). */
export function chatJids(key: WAMessageKey): string[] {
  const out = new Set<string>();
  for (const jid of [key.remoteJid, key.remoteJidAlt, key.participant, key.participantAlt]) {
    if (isPersonAddress(jid)) out.add(toUserJid(jid)!);
  }
  return [...out];
}

/** A contact's identity from its JIDs: the phone's digits and the LID (`<digits>@lid`). */
export function chatIdentity(jids: readonly string[]): { phone?: string; lid?: string } {
  const phone = jids.map(phoneOfJid).find((p) => !!p);
  const lid = toUserJid(jids.find(isLidAddress));
  return { ...(phone ? { phone } : {}), ...(lid ? { lid } : {}) };
}
