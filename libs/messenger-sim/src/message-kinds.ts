/**
 * Message kinds at a simulated phone: reactions, locations, contact cards (vCards), polls and
 * poll votes. Outbound (what the account sent) they are decoded for `GET /inbox/:phone`; inbound
 * (what a contact sends) they are built as a phone builds them — a poll vote encrypted with the
 * poll's messageSecret exactly as WhatsApp does (AES-256-GCM under a key derived from the secret,
 * the poll's id, its creator's and the voter's JIDs).
 */
import { createCipheriv, createHash, createHmac, randomBytes } from 'node:crypto';
import { jidEncode, proto } from '@whiskeysockets/baileys';
import type { InboxMessage, SimUser } from './directory.js';
import { SimError } from './sim-error.js';

/** The inbox fields of a kind (see InboxMessage). */
export type KindFields = Omit<InboxMessage, 'id' | 'from' | 'receivedAt'>;

/** A contact card as the control API takes it: the simulator writes its vCard (or takes `vcard` as is). */
export interface InboundContactCard {
  name?: string;
  phones?: string[];
  /** A raw vCard, sent as written (to test what the gateway makes of any card). */
  vcard?: string;
}

/** What a contact's phone may send besides text and media. */
export interface InboundKindInput {
  /** A reaction to one of the account's messages (its WhatsApp id); `emoji: ""` removes it. */
  reaction?: { messageId: string; emoji: string };
  location?: { latitude: number; longitude: number; name?: string; address?: string };
  contacts?: InboundContactCard[];
  /** A vote on a poll the account sent this contact (its WhatsApp id): option texts, [] withdraws. */
  pollVote?: { pollId: string; options: string[] };
}

/** Poll secrets (messageSecret) per recipient and poll id: what a phone keeps to vote. */
const pollSecrets = new WeakMap<SimUser, Map<string, Buffer>>();
const MAX_POLLS = 1000;

/** Decodes a kind the account sent, or undefined when the message is no kind. */
export function describeKind(message: proto.IMessage): KindFields | undefined {
  if (message.reactionMessage) {
    const r = message.reactionMessage;
    return { type: 'reaction', emoji: r.text ?? '', targetId: r.key?.id ?? undefined };
  }
  if (message.locationMessage) {
    const l = message.locationMessage;
    return {
      type: 'location',
      latitude: l.degreesLatitude ?? undefined,
      longitude: l.degreesLongitude ?? undefined,
      ...(l.name ? { name: l.name } : {}),
      ...(l.address ? { address: l.address } : {}),
    };
  }
  const cards = message.contactMessage
    ? [message.contactMessage]
    : (message.contactsArrayMessage?.contacts ?? undefined);
  if (cards) {
    return {
      type: 'contacts',
      displayName:
        message.contactsArrayMessage?.displayName ?? message.contactMessage?.displayName ?? undefined,
      vcards: cards.map((c) => c.vcard ?? ''),
    };
  }
  const poll = message.pollCreationMessage ?? message.pollCreationMessageV2 ?? message.pollCreationMessageV3;
  if (poll) {
    return {
      type: 'poll',
      question: poll.name ?? '',
      options: (poll.options ?? []).map((o) => o.optionName ?? ''),
      selectableCount: poll.selectableOptionsCount ?? 0,
    };
  }
  return undefined;
}

/** Keeps a poll's messageSecret at its recipient (the phone needs it to vote). */
export function rememberPollSecret(user: SimUser, id: string, raw: proto.IMessage): void {
  const secret = raw.messageContextInfo?.messageSecret;
  if (!secret?.length) return;
  let polls = pollSecrets.get(user);
  if (!polls) pollSecrets.set(user, (polls = new Map()));
  polls.set(id, Buffer.from(secret));
  if (polls.size > MAX_POLLS) polls.delete(polls.keys().next().value!);
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Validates a kind from the control API; SimError 400 for mistakes. True when the input has one. */
export function checkKindInput(input: InboundKindInput): boolean {
  const given = (['reaction', 'location', 'contacts', 'pollVote'] as const).filter(
    (k) => input[k] !== undefined,
  );
  if (given.length > 1) throw new SimError('send one of reaction, location, contacts, pollVote', 400);
  const { reaction, location, contacts, pollVote } = input;
  if (reaction !== undefined) {
    if (!isObject(reaction) || typeof reaction.messageId !== 'string' || typeof reaction.emoji !== 'string')
      throw new SimError('reaction must be { messageId, emoji }', 400);
  }
  if (location !== undefined) {
    if (
      !isObject(location) ||
      typeof location.latitude !== 'number' ||
      typeof location.longitude !== 'number'
    )
      throw new SimError('location must be { latitude, longitude, name?, address? }', 400);
  }
  if (contacts !== undefined) {
    if (!Array.isArray(contacts) || contacts.length === 0 || !contacts.every(isObject))
      throw new SimError('contacts must be a non-empty array of { name, phones } or { vcard }', 400);
  }
  if (pollVote !== undefined) {
    if (!isObject(pollVote) || typeof pollVote.pollId !== 'string' || !Array.isArray(pollVote.options))
      throw new SimError('pollVote must be { pollId, options: [option texts] }', 400);
  }
  return given.length === 1;
}

/** A simple vCard of a card given as fields (the simulator's phone writes its own). */
function vcardOf(card: InboundContactCard): string {
  if (typeof card.vcard === 'string') return card.vcard;
  const phones = (card.phones ?? []).map((p) => `TEL;type=CELL;waid=${p}:+${p}`);
  return ['BEGIN:VCARD', 'VERSION:3.0', `FN:${card.name ?? ''}`, ...phones, 'END:VCARD'].join('\n');
}

const sha256 = (data: Buffer | string): Buffer => createHash('sha256').update(data).digest();
const hmac = (key: Buffer, data: Buffer): Buffer => createHmac('sha256', key).update(data).digest();

/**
 * A vote as WhatsApp encrypts it: the selected options' SHA-256, as a PollVoteMessage, sealed
 * with AES-256-GCM under HMAC(HMAC(0³², secret), pollId | creator | voter | "Poll Vote" | 0x01),
 * the additional data `pollId \0 voter`.
 */
export function encryptPollVote(
  secret: Buffer,
  pollId: string,
  creatorJid: string,
  voterJid: string,
  options: string[],
): { encPayload: Buffer; encIv: Buffer } {
  const plain = proto.Message.PollVoteMessage.encode({
    selectedOptions: options.map((o) => sha256(o)),
  }).finish();
  const sign = Buffer.concat([
    Buffer.from(pollId),
    Buffer.from(creatorJid),
    Buffer.from(voterJid),
    Buffer.from('Poll Vote'),
    Buffer.from([1]),
  ]);
  const key = hmac(hmac(Buffer.alloc(32), secret), sign);
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(`${pollId}\u0000${voterJid}`));
  const enc = Buffer.concat([cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
  return { encPayload: enc, encIv: iv };
}

/** The `proto.Message` of a kind a contact's phone sends to the account; undefined when the input has none. */
export function buildKindMessage(
  contact: SimUser,
  account: SimUser,
  input: InboundKindInput,
): proto.IMessage | undefined {
  const accountJid = jidEncode(account.phone, 's.whatsapp.net');
  if (input.reaction) {
    return {
      reactionMessage: {
        key: { remoteJid: accountJid, fromMe: false, id: input.reaction.messageId },
        text: input.reaction.emoji,
        senderTimestampMs: Date.now(),
      },
    };
  }
  if (input.location) {
    const { latitude, longitude, name, address } = input.location;
    return { locationMessage: { degreesLatitude: latitude, degreesLongitude: longitude, name, address } };
  }
  if (input.contacts) {
    const cards = input.contacts.map((c) => ({ displayName: c.name ?? '', vcard: vcardOf(c) }));
    if (cards.length === 1) return { contactMessage: cards[0] };
    return { contactsArrayMessage: { displayName: `${cards.length} contacts`, contacts: cards } };
  }
  if (input.pollVote) {
    const { pollId, options } = input.pollVote;
    const poll = contact.inbox.find((m) => m.id === pollId && m.from === account.phone && m.type === 'poll');
    const secret = pollSecrets.get(contact)?.get(pollId);
    if (!poll || !secret)
      throw new SimError(`${contact.phone} has no poll ${pollId} from ${account.phone}`, 404);
    const unknown = options.filter((o) => typeof o !== 'string' || !(poll.options ?? []).includes(o));
    if (unknown.length) throw new SimError(`not options of the poll: ${unknown.join(', ')}`, 400);
    const voterJid = jidEncode(contact.phone, 's.whatsapp.net');
    return {
      pollUpdateMessage: {
        pollCreationMessageKey: { remoteJid: accountJid, fromMe: false, id: pollId },
        vote: encryptPollVote(secret, pollId, accountJid, voterJid, options),
        senderTimestampMs: Date.now(),
      },
    };
  }
  return undefined;
}
