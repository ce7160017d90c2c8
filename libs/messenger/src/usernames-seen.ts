/**
 * The usernames WhatsApp names contacts by in what a socket receives (docs/usernames.md): on
 * message stanzas and keys, and in the contacts Baileys reports. Read by the socket and the event
 * parsers, so it imports neither (the lookup of a username, which needs the socket, is
 * usernames.ts).
 */
import type { BinaryNode, WAMessageKey } from '@whiskeysockets/baileys';
import {
  checkUsername,
  type ContactIdentity,
  isGroupAddress,
  isLidAddress,
  phoneOfJid,
  toUserJid,
} from '@mgw/contracts';
import type { WASocket } from './socket.js';

/** A username as WhatsApp sent it, as we keep it (lower case, no `@`), or undefined when it is none. */
export function usernameFromWhatsApp(raw: unknown): string | undefined {
  if (typeof raw !== 'string' || !raw) return undefined;
  const checked = checkUsername(raw);
  return checked.ok ? checked.username : undefined;
}

/** Bound on the message ids whose stanza named its writer's username (kept until read). */
const MAX_STANZA_USERNAMES = 2_000;

/**
 * The usernames WhatsApp puts on one-to-one message stanzas from a contact that has one (the
 * `username` attribute, as WhatsApp Web reads its writer's username: zapo
 * `extractMessageIdentityAttrs`, `participant_username ?? username`). Baileys rc14 reads
 * `participant_username` (groups: `key.participantUsername`) and `peer_recipient_username`
 * (our own devices' messages: `key.remoteJidUsername`) but drops `username`: the socket's
 * `CB:message` frames are seen here first (before the message is decrypted and upserted), and
 * `fillUsername` puts the writer's username on the message's key as `remoteJidUsername` — the
 * username of the chat's contact, what Baileys means by it.
 */
export class StanzaUsernames {
  private readonly byId = new Map<string, string>();

  /** A `<message>` frame: its writer's username, by the message's id (one-to-one chats only). */
  seen(stanza: BinaryNode): void {
    const { id, from, participant, username } = stanza.attrs;
    if (!id || !from || participant || isGroupAddress(from)) return;
    const name = usernameFromWhatsApp(username);
    if (!name) return;
    this.byId.set(id, name);
    if (this.byId.size > MAX_STANZA_USERNAMES) this.byId.delete(this.byId.keys().next().value!);
  }

  /** Puts the stanza's username on a contact's one-to-one message key that has none. */
  fillUsername(key: WAMessageKey): void {
    if (key.fromMe || !key.id || key.remoteJidUsername || isGroupAddress(key.remoteJid)) return;
    const name = this.byId.get(key.id);
    if (name) key.remoteJidUsername = name;
  }
}

/** The writer's username of a message: its one-to-one chat's (`remoteJidUsername`) or its group author's. */
export function usernameOfKey(key: WAMessageKey): string | undefined {
  if (isGroupAddress(key.remoteJid)) return usernameFromWhatsApp(key.participantUsername);
  return usernameFromWhatsApp(key.remoteJidUsername);
}

/**
 * The contacts Baileys reports with a username (app-state `ContactAction.username` and
 * `LidContactAction.username`, history sync's `Conversation.username`: the fields whatsmeow's
 * protos carry, waSyncAction and waHistorySync), as identities: the LID with its username (and
 * its phone when told). A contact without a LID is left out (a username names a LID).
 */
export function contactUsernames(
  contacts: readonly { id?: string; lid?: string; phoneNumber?: string; username?: string }[],
): ContactIdentity[] {
  const out: ContactIdentity[] = [];
  for (const c of contacts) {
    const username = usernameFromWhatsApp(c.username);
    const lid = toUserJid([c.lid, c.id].find(isLidAddress));
    if (!username || !lid) continue;
    const phone = [c.phoneNumber, c.id].map(phoneOfJid).find((p) => !!p);
    out.push({ ...(phone ? { phone } : {}), lid, username });
  }
  return out;
}

/**
 * The usernames in what a socket receives: the writer's username of one-to-one messages onto their
 * keys (before any other listener of `messages.upsert` reads them: call this first), and the
 * contacts Baileys reports with a username, as identities (`report`).
 */
export function watchUsernames(sock: WASocket, report: (identities: ContactIdentity[]) => void): void {
  const stanzas = new StanzaUsernames();
  // A test's stand-in socket may have no transport: only the frames' usernames are then unseen.
  (sock.ws as WASocket['ws'] | undefined)?.on('CB:message', (node: BinaryNode) => stanzas.seen(node));
  sock.ev.on('messages.upsert', ({ messages }) => {
    for (const m of messages) stanzas.fillUsername(m.key);
  });
  sock.ev.on('contacts.upsert', (contacts) => {
    const named = contactUsernames(contacts);
    if (named.length) report(named);
  });
}
