/**
 * WhatsApp usernames on the socket (docs/usernames.md): the lookup of a username (with its PIN,
 * the "username key", when it has one) and the usernames WhatsApp names contacts by in what it
 * sends.
 *
 * The lookup is a usync query as WhatsApp Web makes it (`queryUsernameExists`; wa-js
 * `src/contact/functions/queryUsernameExists.ts`, zapo `WaProfileCoordinator.resolveUsername`):
 * `<query>` asks `<contact addressing_mode="lid"/>` (as whatsmeow 33cfac51 `user.go`
 * `IsOnWhatsApp` asks it, so the answer names a LID) and `<business><verified_name/></business>`;
 * `<list>` holds one `<user>` without a `jid`, whose `<contact username=… pin=…/>` names the
 * account. Baileys rc14's `executeUSyncQuery` could build it (`USyncUser.withUsername`), but its
 * `parseUSyncQueryResult` drops a `<user>` without a `jid` — exactly the answer of a username
 * guarded by a PIN — so "PIN required" would read as "not found": the iq is sent with the
 * socket's `query()` and the raw answer read here. The answer, as WhatsApp Web reads it (zapo
 * `parseUsernameLookup`, whatsapp-rust PR #1381 `UsernameLookup`): an `<error>` in `<contact>` or
 * `type="out"` — no account has it; a `<user>` with no `jid` — the username needs its key (none,
 * or a wrong one, was given); a `jid` — found: the account's LID, its phone in `pn_jid` when
 * WhatsApp tells it. whatsmeow has no username lookup yet (its `IsOnWhatsApp` asks the usync
 * `username` protocol and does not read it).
 */
import {
  S_WHATSAPP_NET,
  getBinaryNodeChild,
  getBinaryNodeChildren,
  type BinaryNode,
  type WAMessageKey,
} from '@whiskeysockets/baileys';
import {
  checkUsername,
  type ContactIdentity,
  type UsernameLookup,
  isGroupAddress,
  isLidAddress,
  phoneOfJid,
  toUserJid,
} from '@mgw/contracts';
import type { DeviceSocket } from './device-socket.js';
import { LookupFailedError, NotConnectedError } from './message-sender.js';
import type { WASocket } from './socket.js';

/** The longest one username lookup may take. */
const LOOKUP_TIMEOUT_MS = 20_000;

/** A username as WhatsApp sent it, as we keep it (lower case, no `@`), or undefined when it is none. */
export function usernameFromWhatsApp(raw: unknown): string | undefined {
  if (typeof raw !== 'string' || !raw) return undefined;
  const checked = checkUsername(raw);
  return checked.ok ? checked.username : undefined;
}

/** The usync iq of one username lookup (`username` lower case, no `@`; `pin` its key when given). */
export function usernameLookupIq(username: string, pin: string | undefined, sid: string): BinaryNode {
  return {
    tag: 'iq',
    attrs: { to: S_WHATSAPP_NET, type: 'get', xmlns: 'usync' },
    content: [
      {
        tag: 'usync',
        attrs: { context: 'interactive', mode: 'query', sid, last: 'true', index: '0' },
        content: [
          {
            tag: 'query',
            attrs: {},
            content: [
              { tag: 'contact', attrs: { addressing_mode: 'lid' } },
              { tag: 'business', attrs: {}, content: [{ tag: 'verified_name', attrs: {} }] },
            ],
          },
          {
            tag: 'list',
            attrs: {},
            content: [
              {
                tag: 'user',
                attrs: {},
                content: [{ tag: 'contact', attrs: { username, ...(pin ? { pin } : {}) } }],
              },
            ],
          },
        ],
      },
    ],
  };
}

/**
 * WhatsApp's answer to one username lookup (see the module's comment). A `<contact>` error other
 * than "not found" (a rate limit, a server failure) is no answer: it throws, and the lookup may be
 * made again.
 */
export function parseUsernameAnswer(username: string, result: BinaryNode): UsernameLookup {
  const list = getBinaryNodeChild(getBinaryNodeChild(result, 'usync'), 'list');
  if (!list) throw new LookupFailedError('the username lookup answered no list');
  const user = getBinaryNodeChildren(list, 'user')[0];
  if (!user) return { username, status: 'not_found' };
  const contact = getBinaryNodeChild(user, 'contact');
  const error = getBinaryNodeChild(contact, 'error');
  if (error) {
    const code = Number(error.attrs.code);
    if (!error.attrs.code || code === 404) return { username, status: 'not_found' };
    throw new LookupFailedError(`the username lookup failed (error ${error.attrs.code})`);
  }
  if (contact?.attrs.type === 'out') return { username, status: 'not_found' };
  const jid = user.attrs.jid;
  if (!jid) return { username, status: 'pin_required' };
  const lid = isLidAddress(jid) ? toUserJid(jid) : undefined;
  const phone = [user.attrs.pn_jid, jid].map(phoneOfJid).find((p) => !!p);
  if (!lid && !phone) return { username, status: 'not_found' };
  return { username, status: 'found', ...(lid ? { lid } : {}), ...(phone ? { phone } : {}) };
}

/**
 * Asks WhatsApp who has `username` (lower case, no `@`), with its key when given. Never logs the
 * username or the PIN.
 */
export async function lookUpUsername(
  conn: Pick<DeviceSocket, 'socket' | 'isOpen'>,
  username: string,
  pin?: string,
): Promise<UsernameLookup> {
  const sock = conn.socket;
  if (!sock || !conn.isOpen) throw new NotConnectedError('the device socket is not open');
  const result = await sock.query(
    usernameLookupIq(username, pin, sock.generateMessageTag()),
    LOOKUP_TIMEOUT_MS,
  );
  if (!result) throw new LookupFailedError('the username lookup got no answer');
  return parseUsernameAnswer(username, result);
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
