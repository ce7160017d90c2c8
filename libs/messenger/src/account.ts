import { EventEmitter } from 'node:events';
import {
  isGroupAddress,
  isLidAddress,
  toUserJid,
  type AccountPresence,
  type BusinessProfile,
  type ContactPresence,
} from '@mgw/contracts';
import { jidDecode, jidNormalizedUser, S_WHATSAPP_NET, type PresenceData } from '@whiskeysockets/baileys';
import { whatsappErrorCode } from './groups.js';
import type { WASocket } from './socket.js';
import { setTextStatus } from './text-status.js';

/** A contact's presence as the socket reported it (`presence.update`). */
export interface PresenceSeen {
  /** The contact's JID (`<phone>@s.whatsapp.net` or `<digits>@lid`). */
  jid: string;
  presence: ContactPresence;
  lastSeen?: Date;
  /** A chat state shown in a group: the group's JID. */
  groupJid?: string;
}

/** A change of the account's blocklist WhatsApp pushed (the phone, or another device, blocked). */
export interface BlocklistChange {
  /** JIDs as WhatsApp named them (LIDs for blocklist v2). */
  jids: string[];
  type: 'add' | 'remove';
}

export interface AccountEvents {
  presence: [PresenceSeen];
  blocklist: [BlocklistChange];
}

/** WhatsApp refused a profile photo (not an image it takes, too large). */
export class PhotoRefusedError extends Error {}

/**
 * The account itself through the device's socket: its name, "about", photo and presence; what
 * contacts show of themselves (about, photo, business profile); their presence; the blocklist.
 * Events: contacts' presence and WhatsApp's blocklist pushes of the socket watched (`watch`).
 */
export class AccountActions extends EventEmitter<AccountEvents> {
  constructor(private readonly socket: () => WASocket | undefined) {
    super();
  }

  /** Reports what a new socket hears about presence and the blocklist (called for every socket). */
  watch(sock: WASocket, isCurrent: () => boolean): void {
    sock.ev.on('presence.update', ({ id, presences }) => {
      if (!isCurrent()) return;
      for (const [participant, data] of Object.entries(presences)) {
        const seen = presenceOf(id, participant, data);
        if (seen) this.emit('presence', seen);
      }
    });
    sock.ev.on('blocklist.update', ({ blocklist, type }) => {
      if (isCurrent()) this.emit('blocklist', { jids: blocklist, type });
    });
  }

  /**
   * The account's own JID without its device (`<phone>@s.whatsapp.net`). From the creds, not
   * `sock.user`: Baileys' outer socket layers spread the inner one, which freezes that getter's
   * value at creation (a name set later is not in it).
   */
  private me(sock: WASocket): string {
    const id = sock.authState.creds.me?.id;
    if (!id) throw new Error('the socket has no account yet');
    return jidNormalizedUser(id);
  }

  /** Name, "about" and photo URL, as contacts see them (the about and photo asked of WhatsApp). */
  async profile(): Promise<{ phone: string; name?: string; about?: string; pictureUrl?: string }> {
    const sock = this.requireSocket();
    const jid = this.me(sock);
    const [about, pictureUrl] = await Promise.all([this.about(sock, jid), this.picture(sock, jid)]);
    const name = sock.authState.creds.me?.name;
    return {
      phone: jidDecode(jid)?.user ?? '',
      ...(name && name !== '~' ? { name } : {}),
      ...(about?.text ? { about: about.text } : {}),
      ...(pictureUrl ? { pictureUrl } : {}),
    };
  }

  /**
   * The push name contacts see. It is the creds' name: Baileys sends it to WhatsApp in a
   * `<presence name>` on every change (as WhatsApp Web does when its name setting changes), and
   * the device's creds keep it for the next connection's presence. WhatsApp's app-state copy of
   * the setting (the phone's own "name" field) is not patched: see docs/account.md.
   */
  setName(name: string): void {
    const sock = this.requireSocket();
    const me = sock.authState.creds.me;
    if (!me) throw new Error('the socket has no account yet');
    sock.ev.emit('creds.update', { me: { ...me, name } });
  }

  /** The about (text status): WhatsApp's 2026 mutation, then the legacy iq (text-status.ts). */
  async setAbout(about: string): Promise<void> {
    await setTextStatus(this.requireSocket(), about);
  }

  /** Sets the account's photo (Baileys re-encodes it as a 640×640 JPEG). */
  async setPhoto(bytes: Buffer): Promise<void> {
    const sock = this.requireSocket();
    try {
      await sock.updateProfilePicture(this.me(sock), bytes);
    } catch (err) {
      // sharp refuses what is no image it can read, before anything reaches WhatsApp.
      if (whatsappErrorCode(err) === undefined && /unsupported image|Input buffer/i.test(String(err)))
        throw new PhotoRefusedError('not an image');
      throw err;
    }
  }

  async removePhoto(): Promise<void> {
    const sock = this.requireSocket();
    await sock.removeProfilePicture(this.me(sock));
  }

  /** What `jid` shows of itself: about (if its privacy lets us), photo URL, business profile. */
  async contactProfile(jid: string): Promise<{
    about?: { text: string; setAt?: Date };
    pictureUrl?: string;
    business?: BusinessProfile;
  }> {
    const sock = this.requireSocket();
    const [about, pictureUrl, business] = await Promise.all([
      this.about(sock, jid),
      this.picture(sock, jid),
      sock.getBusinessProfile(jid),
    ]);
    return {
      ...(about?.text ? { about } : {}),
      ...(pictureUrl ? { pictureUrl } : {}),
      ...(business ? { business: businessOf(business) } : {}),
    };
  }

  /**
   * Online or offline for contacts (and WhatsApp's own delivery of push notifications to the
   * phone: an account "available" on the web gets none there). False when the account has no name
   * (WhatsApp ignores the presence of a nameless account, and Baileys sends none).
   */
  async setPresence(presence: AccountPresence): Promise<boolean> {
    const sock = this.requireSocket();
    const name = sock.authState.creds.me?.name;
    if (!name || name === '~') return false;
    await sock.sendPresenceUpdate(presence);
    return true;
  }

  /** Subscribes to `jid`'s presence: its changes come as `presence` events while the socket lives. */
  async subscribe(jid: string): Promise<void> {
    await this.requireSocket().presenceSubscribe(jid);
  }

  /**
   * Blocks or unblocks by LID (blocklist v2: Baileys names the LID, and the phone beside it on a
   * block). A contact whose number the device does not know (it hides it) is blocked by its LID
   * alone, as whatsmeow does since 8d023aa9 (2026); Baileys rc14 refuses such a block.
   */
  async block(jid: string, action: 'block' | 'unblock'): Promise<void> {
    const sock = this.requireSocket();
    const lid = isLidAddress(jid) ? toUserJid(jid) : undefined;
    if (action === 'block' && lid && !(await sock.signalRepository.lidMapping.getPNForLID(lid))) {
      await sock.query({
        tag: 'iq',
        attrs: { xmlns: 'blocklist', to: S_WHATSAPP_NET, type: 'set' },
        content: [{ tag: 'item', attrs: { action, jid: lid } }],
      });
      return;
    }
    await sock.updateBlockStatus(jid, action);
  }

  /** The blocklist as WhatsApp keeps it (JIDs: LIDs for blocklist v2). */
  async blocklist(): Promise<string[]> {
    return (await this.requireSocket().fetchBlocklist()).filter((j): j is string => !!j);
  }

  private async about(sock: WASocket, jid: string): Promise<{ text: string; setAt?: Date } | undefined> {
    const [entry] = ((await sock.fetchStatus(jid)) ?? []) as {
      status?: { status?: string | null; setAt?: Date } | null;
    }[];
    const text = entry?.status?.status;
    if (!text) return undefined;
    const setAt = entry.status?.setAt;
    return { text, ...(setAt && setAt.getTime() > 0 ? { setAt } : {}) };
  }

  /** The photo's URL; none when WhatsApp says there is none (404) or the contact hides it (401). */
  private async picture(sock: WASocket, jid: string): Promise<string | undefined> {
    try {
      return await sock.profilePictureUrl(jid, 'image', 10_000);
    } catch (err) {
      const code = whatsappErrorCode(err);
      if (code === 404 || code === 401 || code === 403) return undefined;
      throw err;
    }
  }

  private requireSocket(): WASocket {
    const sock = this.socket();
    if (!sock) throw new Error('the device socket is not open');
    return sock;
  }
}

/**
 * Baileys' presence entry as ours. A `<presence>` stanza gives `lastSeen` (as a key, even when
 * undefined) and only available / unavailable; a `<chatstate>` gives composing, recording, or
 * "available" for paused — the key tells them apart.
 */
export function presenceOf(
  chatJid: string,
  participant: string,
  data: PresenceData,
): PresenceSeen | undefined {
  const group = isGroupAddress(chatJid) ? chatJid : undefined;
  const fromPresenceStanza = 'lastSeen' in data;
  let presence: ContactPresence;
  switch (data.lastKnownPresence) {
    case 'available':
      presence = fromPresenceStanza ? 'online' : 'paused';
      break;
    case 'unavailable':
      presence = 'offline';
      break;
    case 'composing':
      presence = 'typing';
      break;
    case 'recording':
      presence = 'recording';
      break;
    case 'paused':
      presence = 'paused';
      break;
    default:
      return undefined;
  }
  return {
    jid: jidNormalizedUser(participant),
    presence,
    ...(data.lastSeen ? { lastSeen: new Date(data.lastSeen * 1000) } : {}),
    ...(group ? { groupJid: group } : {}),
  };
}

function businessOf(b: {
  description?: string;
  category?: string;
  email?: string;
  website?: string[];
  address?: string;
}): BusinessProfile {
  return {
    ...(b.description ? { description: b.description } : {}),
    ...(b.category ? { category: b.category } : {}),
    ...(b.email ? { email: b.email } : {}),
    ...(b.website?.length ? { website: b.website } : {}),
    ...(b.address ? { address: b.address } : {}),
  };
}
