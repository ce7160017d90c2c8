/**
 * WhatsApp usernames on the socket (docs/usernames.md): the lookup of a username (with its PIN,
 * the "username key", when it has one). The usernames WhatsApp names contacts by in what it sends
 * are read in usernames-seen.ts (which the socket and the event parsers import: this module imports
 * the socket's type, they must not).
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
} from '@whiskeysockets/baileys';
import { type UsernameLookup, isLidAddress, phoneOfJid, toUserJid } from '@mgw/contracts';
import type { DeviceSocket } from './device-socket.js';
import { LookupFailedError, NotConnectedError } from './message-sender.js';

/** The longest one username lookup may take. */
const LOOKUP_TIMEOUT_MS = 20_000;

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
