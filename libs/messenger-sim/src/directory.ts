import { randomInt } from 'node:crypto';
import { PhoneSignal, type PreKeyBundle } from './phone-signal.js';
import type { DeviceConnection } from './device-connection.js';
import { S_WHATSAPP_NET, type BinaryNode } from '@whiskeysockets/baileys';
import { newStanzaId, node, unixSeconds } from './stanza.js';

export interface InboxMessage {
  id: string;
  from: string;
  type:
    | 'text'
    | 'image'
    | 'video'
    | 'audio'
    | 'document'
    | 'sticker'
    | 'other'
    | 'edit'
    | 'delete'
    | 'reaction'
    | 'location'
    | 'contacts'
    | 'poll';
  text?: string;
  caption?: string;
  fileName?: string;
  mimetype?: string;
  fileSha256?: string;
  fileLength?: number;
  quotedId?: string;
  /** The quoted message's author (the quote's `participant` JID), and the text or caption it carries. */
  quotedAuthor?: string;
  quotedText?: string;
  /** A group message: the group's id (`<id>@g.us`). */
  groupId?: string;
  /** The JIDs the text or caption mentions. */
  mentions?: string[];
  receivedAt: string;
  /** Message kinds (message-kinds.ts): a reaction's emoji (its message: `targetId`). */
  emoji?: string;
  /** A location. */
  latitude?: number;
  longitude?: number;
  name?: string;
  address?: string;
  /** Contact cards: the vCards as received, and the message's display name. */
  vcards?: string[];
  displayName?: string;
  /** A poll: its question, options, and how many may be chosen (0: any number). */
  question?: string;
  options?: string[];
  selectableCount?: number;
  /** Further copies with the same id that arrived later (WhatsApp shows a message once per id). */
  duplicates?: number;
  /** An edit, a delete or a reaction: the id of the message it changes (see revisions.ts). */
  targetId?: string;
  /** An edit or delete not applied: `window` (too late) or `unknown_target`. */
  refused?: string;
  /** This message was edited (its current text) or deleted for everyone since it arrived. */
  editedText?: string;
  deleted?: true;
  /** A text's link preview as the contact sees it. */
  preview?: { title?: string; description?: string; url?: string; thumbnailBytes?: number };
}

/** A copy a simulated phone could not decrypt, e.g. after a gateway rolled its Signal state back. */
export interface UndecryptableMessage {
  id: string;
  from: string;
  error: string;
  receivedAt: string;
}

/** A companion device (the gateway's Baileys socket) linked to an account. */
export interface CompanionDevice {
  id: number;
  keyIndex: number;
  noiseKey: Buffer;
  identityKey: Buffer;
  registrationId: number;
  signedPreKey: { keyId: number; publicKey: Buffer; signature: Buffer };
  preKeys: Map<number, Buffer>;
  /** How many times the server told the device its pre-keys run low (see companionBundle). */
  preKeysLowNotified?: number;
  platform: string;
  linkedAt: string;
  connection?: DeviceConnection;
  /** Stanzas for the device while it is offline, delivered after its next login. */
  pending: BinaryNode[];
}

export interface SimUser {
  phone: string;
  lid: string;
  name: string;
  pictureUrl?: string;
  receipts: ReceiptMode;
  /** How its one-to-one chats are addressed: by phone number (default) or by LID (see lid-chats.ts). */
  addressing: ChatAddressing;
  /** The contact hides its number: its chats are LID-addressed and never carry `sender_pn`. */
  hidePhone: boolean;
  /** Its WhatsApp username (lower case, no `@`), and the 4-digit key guarding it (usernames.ts). */
  username?: string;
  usernamePin?: string;
  signal: PhoneSignal;
  inbox: InboxMessage[];
  undecryptable: UndecryptableMessage[];
  devices: Map<number, CompanionDevice>;
  nextDeviceId: number;
  nextKeyIndex: number;
  /** The account's NCT salt, once made (first-contacts.ts). */
  nctSalt?: Buffer;
}

/** How a contact's one-to-one chats are addressed. */
export type ChatAddressing = 'pn' | 'lid';

/** How far a contact's phone acknowledges what it receives. */
export type ReceiptMode = 'read' | 'delivered' | 'none';

export interface ContactInput {
  phone: string;
  name?: string;
  pictureUrl?: string | null;
  onWhatsApp?: boolean;
  /** @defaultValue 'read' */
  receipts?: ReceiptMode;
  /** @defaultValue 'pn' */
  addressing?: ChatAddressing;
  /** @defaultValue false */
  hidePhone?: boolean;
}

/** A contact as the control API shows it (Simulator.upsertContact). */
export interface ContactView {
  phone: string;
  lid?: string;
  name?: string;
  pictureUrl?: string;
  receipts?: ReceiptMode;
  addressing?: ChatAddressing;
  hidePhone?: boolean;
  onWhatsApp: boolean;
}

export type UnknownNumbers = 'create' | 'reject';

const normalizePhone = (phone: string): string => phone.replace(/[^0-9]/g, '');

/** Everyone the simulated network knows: accounts that link devices and the contacts they write to. */
export class Directory {
  private readonly byPhone = new Map<string, SimUser>();
  private readonly byLid = new Map<string, SimUser>();
  private readonly notOnWhatsApp = new Set<string>();

  constructor(public unknownNumbers: UnknownNumbers) {}

  get(phone: string): SimUser | undefined {
    return this.byPhone.get(normalizePhone(phone));
  }

  getByLid(lid: string): SimUser | undefined {
    return this.byLid.get(lid);
  }

  /** Resolves a jid user part (phone number or LID) the client used. */
  resolve(user: string, server: string | undefined): SimUser | undefined {
    return server === 'lid' ? this.byLid.get(user) : this.lookupOrCreate(user);
  }

  /** Honours `unknownNumbers`: an unseen number becomes a user, or stays off WhatsApp. */
  lookupOrCreate(phone: string): SimUser | undefined {
    const p = normalizePhone(phone);
    const existing = this.byPhone.get(p);
    if (existing) return existing;
    if (!p || this.notOnWhatsApp.has(p) || this.unknownNumbers === 'reject') return undefined;
    return this.upsert({ phone: p });
  }

  upsert(input: ContactInput): SimUser | undefined {
    const phone = normalizePhone(input.phone);
    if (!phone) throw new Error('phone is required');
    if (input.onWhatsApp === false) {
      this.notOnWhatsApp.add(phone);
      const user = this.byPhone.get(phone);
      if (user) {
        this.byPhone.delete(phone);
        this.byLid.delete(user.lid);
      }
      return undefined;
    }
    this.notOnWhatsApp.delete(phone);
    let user = this.byPhone.get(phone);
    if (!user) {
      user = {
        phone,
        lid: this.newLid(),
        name: input.name ?? `User ${phone}`,
        receipts: 'read',
        addressing: 'pn',
        hidePhone: false,
        signal: new PhoneSignal(),
        inbox: [],
        undecryptable: [],
        devices: new Map(),
        nextDeviceId: 1,
        nextKeyIndex: 1,
      };
      this.byPhone.set(phone, user);
      this.byLid.set(user.lid, user);
    }
    if (input.name !== undefined) user.name = input.name;
    if (input.pictureUrl !== undefined) user.pictureUrl = input.pictureUrl ?? undefined;
    if (input.receipts !== undefined) user.receipts = input.receipts;
    if (input.addressing !== undefined) user.addressing = input.addressing;
    if (input.hidePhone !== undefined) user.hidePhone = input.hidePhone;
    return user;
  }

  /**
   * `user` now has `newPhone` (it changed its number; its LID stays): the old number is free, so a
   * later lookup of it finds nobody, or (unknown numbers created) a new account with a new LID.
   */
  renumber(user: SimUser, newPhone: string): void {
    const phone = normalizePhone(newPhone);
    if (!phone) throw new Error('phone is required');
    this.byPhone.delete(user.phone);
    this.notOnWhatsApp.delete(phone);
    user.phone = phone;
    this.byPhone.set(phone, user);
  }

  users(): SimUser[] {
    return [...this.byPhone.values()];
  }

  /** Numbers marked as not on WhatsApp (`onWhatsApp: false`). */
  notOnWhatsAppNumbers(): string[] {
    return [...this.notOnWhatsApp];
  }

  /** Adds the users (and not-on-WhatsApp numbers) of a saved state (persistence.ts). */
  restore(users: SimUser[], notOnWhatsApp: string[]): void {
    for (const user of users) {
      this.byPhone.set(user.phone, user);
      this.byLid.set(user.lid, user);
    }
    for (const phone of notOnWhatsApp) this.notOnWhatsApp.add(phone);
  }

  private newLid(): string {
    for (;;) {
      const lid = `${randomInt(1, 10)}${String(randomInt(0, 1e7)).padStart(7, '0')}${String(randomInt(0, 1e7)).padStart(7, '0')}`;
      if (!this.byLid.has(lid)) return lid;
    }
  }
}

/**
 * Below this many one-time pre-keys left, the server tells the device (an `encrypt` notification
 * with the count) so it uploads more. The clients act on the count, not on when it comes:
 * whatsmeow uploads when it is under its MinPreKeyCount (5), Baileys under MIN_PREKEY_COUNT (5).
 */
export const PRE_KEY_LOW_COUNT = 5;
/** Stanzas kept for an offline device until its next login (oldest dropped). */
export const MAX_PENDING_PER_DEVICE = 1000;

/** A bundle for a companion device out of the prekeys it uploaded; each one-time prekey is used once. */
export function companionBundle(device: CompanionDevice): PreKeyBundle {
  const first = device.preKeys.entries().next();
  let preKey: PreKeyBundle['preKey'];
  if (!first.done) {
    const [keyId, publicKey] = first.value;
    device.preKeys.delete(keyId);
    preKey = { keyId, publicKey };
    // Once, when the count crosses the threshold (a refill brings it back above): a notification
    // per fetch below it would have the device upload again for each.
    if (device.preKeys.size === PRE_KEY_LOW_COUNT - 1) notifyPreKeysLow(device);
  }
  return {
    registrationId: device.registrationId,
    identityKey: device.identityKey,
    signedPreKey: device.signedPreKey,
    preKey,
  };
}

/** `<notification type="encrypt" from="s.whatsapp.net"><count value="N"/></notification>`, live or at the next login. */
function notifyPreKeysLow(device: CompanionDevice): void {
  const stanza = node(
    'notification',
    { from: S_WHATSAPP_NET, type: 'encrypt', id: newStanzaId(), t: unixSeconds() },
    [node('count', { value: String(device.preKeys.size) })],
  );
  device.preKeysLowNotified = (device.preKeysLowNotified ?? 0) + 1;
  const conn = device.connection;
  if (conn && !conn.closed) conn.send(stanza);
  else if (device.pending.push(stanza) > MAX_PENDING_PER_DEVICE) device.pending.shift();
}

export { normalizePhone };

/** How many messages a simulated user keeps in its inbox (and its undecryptable list). */
export const MAX_INBOX = 10_000;

/** Files a message the user could not decrypt (oldest dropped past MAX_INBOX). */
export function noteUndecryptable(user: SimUser, id: string, from: string, err: unknown): void {
  const error = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  if (user.undecryptable.push({ id, from, error, receivedAt: new Date().toISOString() }) > MAX_INBOX)
    user.undecryptable.shift();
}
