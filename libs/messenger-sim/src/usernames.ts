/**
 * Usernames (2026): a contact may have a username (`alice.shop`), optionally guarded by a 4-digit
 * key (the "username key", a PIN), and hide its number (`hidePhone`). The server answers a usync
 * username lookup — a `<user>` without a `jid` whose `<contact username=… pin=…/>` names the
 * account, asked with `<contact addressing_mode="lid"/>` — as WhatsApp Web reads the answer
 * (`queryUsernameExists`; zapo `parseUsernameLookup`, whatsapp-rust PR #1381; whatsmeow 33cfac51
 * has no username lookup, its `IsOnWhatsApp` asks the same `addressing_mode="lid"` contact
 * protocol):
 *
 * - found: `<user jid="<lid>@lid" pn_jid="<phone>@s.whatsapp.net">` (no `pn_jid` when the contact
 *   hides its number) with `<contact type="in" username=…/>`;
 * - guarded and the PIN missing or wrong: `<user>` without a `jid`, `<contact type="in" username=…/>`
 *   (what Baileys rc14's usync parser drops: the gateway reads the raw answer);
 * - no account has it: `<contact type="out" username=…/>`.
 *
 * A contact with a username also names it on the messages it writes: the stanza's `username`
 * attribute (`usernameAttrs`). Usernames are set with `POST /contacts` (`username`, `usernamePin`).
 */
import { getBinaryNodeChild, jidEncode, type BinaryNode } from '@whiskeysockets/baileys';
import type { ClientConnection } from './client-connection.js';
import type { ContactView, SimUser } from './directory.js';
import type { DirectoryContext } from './sim-context.js';
import { SimError } from './sim-error.js';
import { node } from './stanza.js';

type Body = Record<string, unknown>;
type Handler = (body: Body, params: string[]) => unknown;

/**
 * What the server takes as a username: 3 to 35 of a-z, 0-9, `_` and `.`, at least one letter, no
 * period first, last or twice in a row (WhatsApp's rules; a leading `@` and capitals are taken and
 * made lower case, as its apps do).
 */
const USERNAME = /^(?=.*[a-z])(?!\.)(?!.*\.\.)(?!.*\.$)[a-z0-9_.]{3,35}$/;
const PIN = /^\d{4}$/;

const normalise = (value: string) => value.replace(/^@/, '').toLowerCase();

/** A `<user>` of a usync query that names a username (`<contact username=…/>`, no `jid`). */
export function isUsernameLookup(request: BinaryNode): boolean {
  return !request.attrs.jid && getBinaryNodeChild(request, 'contact')?.attrs.username !== undefined;
}

export interface UsernameLookupsView {
  /** Usernames the account's devices asked about. */
  count: number;
  /** When each was asked, and what the server answered (the last 1,000). */
  queries: { at: string; answer: 'found' | 'pin_required' | 'not_found' }[];
}

const lookups = new WeakMap<DirectoryContext, Map<string, UsernameLookupsView>>();

function record(
  sim: DirectoryContext,
  account: string,
  answer: UsernameLookupsView['queries'][number]['answer'],
): void {
  let byAccount = lookups.get(sim);
  if (!byAccount) lookups.set(sim, (byAccount = new Map()));
  let view = byAccount.get(account);
  if (!view) byAccount.set(account, (view = { count: 0, queries: [] }));
  view.count += 1;
  view.queries.push({ at: new Date().toISOString(), answer });
  if (view.queries.length > 1_000) view.queries.shift();
}

/** The user whose username is `username` (lower case), if any. */
function owner(sim: DirectoryContext, username: string): SimUser | undefined {
  return sim.directory.users().find((u) => u.username === username);
}

/** The answer to one username `<user>` of a usync query (see the module's comment). */
export function usernameLookupResult(
  sim: DirectoryContext,
  conn: ClientConnection,
  request: BinaryNode,
  protocols: Set<string>,
): BinaryNode {
  const asked = getBinaryNodeChild(request, 'contact')!.attrs;
  const username = normalise(asked.username ?? '');
  const user = owner(sim, username);
  const answer = !user
    ? 'not_found'
    : user.usernamePin && user.usernamePin !== asked.pin
      ? 'pin_required'
      : 'found';
  if (conn.account) record(sim, conn.account.phone, answer);
  if (answer === 'not_found') return node('user', {}, [node('contact', { type: 'out', username })]);
  if (answer === 'pin_required') return node('user', {}, [node('contact', { type: 'in', username })]);
  const content = [node('contact', { type: 'in', username })];
  if (protocols.has('business')) content.push(node('business', {}));
  return node(
    'user',
    {
      jid: jidEncode(user!.lid, 'lid'),
      ...(user!.hidePhone ? {} : { pn_jid: jidEncode(user!.phone, 's.whatsapp.net') }),
    },
    content,
  );
}

/** The `username` attribute of a stanza a contact with a username sends (its messages). */
export function usernameAttrs(contact: SimUser): Record<string, string> {
  return contact.username ? { username: contact.username } : {};
}

/** `username` and `usernamePin` of a POST /contacts body: undefined when absent, null to remove. */
export interface UsernameInput {
  username?: string | null;
  usernamePin?: string | null;
}

/**
 * The username fields of a POST /contacts body, checked before the contact is written: a username
 * by the server's rules, not another account's (409); a PIN of 4 digits.
 */
export function usernameInputOf(sim: DirectoryContext, body: Body): UsernameInput {
  const input: UsernameInput = {};
  const { username, usernamePin } = body;
  if (username !== undefined && username !== null) {
    if (typeof username !== 'string' || !USERNAME.test(normalise(username)))
      throw new SimError(
        'username must be 3 to 35 of a-z, 0-9, _ and ., with a letter, and no period first, last or twice in a row',
        400,
      );
    const taken = owner(sim, normalise(username));
    if (taken && taken.phone !== String(body.phone ?? '').replace(/[^0-9]/g, ''))
      throw new SimError(`username ${normalise(username)} is taken by another account`, 409);
    input.username = normalise(username);
  } else if (username === null) input.username = null;
  if (usernamePin !== undefined && usernamePin !== null) {
    if (typeof usernamePin !== 'string' || !PIN.test(usernamePin))
      throw new SimError('usernamePin must be 4 digits', 400);
    input.usernamePin = usernamePin;
  } else if (usernamePin === null) input.usernamePin = null;
  return input;
}

/** Sets the contact's username and PIN (`POST /contacts`); its view with them. */
export function withUsername(
  sim: DirectoryContext,
  view: ContactView,
  input: UsernameInput,
): ContactView & { username?: string; usernamePin?: string } {
  const user = view.onWhatsApp ? sim.directory.get(view.phone) : undefined;
  if (!user) {
    if (input.username || input.usernamePin)
      throw new SimError('a username needs a contact on WhatsApp', 400);
    return view;
  }
  if (input.username !== undefined && input.username !== (user.username ?? null)) {
    user.username = input.username ?? undefined;
    // Another username starts unguarded unless a PIN comes with it; none, no PIN.
    delete user.usernamePin;
  }
  if (input.usernamePin !== undefined) {
    if (input.usernamePin && !user.username) throw new SimError('usernamePin needs a username', 400);
    user.usernamePin = input.usernamePin ?? undefined;
  }
  return {
    ...view,
    ...(user.username ? { username: user.username } : {}),
    ...(user.usernamePin ? { usernamePin: user.usernamePin } : {}),
  };
}

/** `GET /accounts/:phone/username-lookups`: the username lookups the account's devices made. */
export function usernameRoutes(sim: DirectoryContext): Array<[string, RegExp, Handler]> {
  return [
    [
      'GET',
      /^\/accounts\/([^/]+)\/username-lookups$/,
      (_b, [phone]) => {
        const view = lookups.get(sim)?.get(String(phone).replace(/[^0-9]/g, ''));
        return { count: view?.count ?? 0, queries: [...(view?.queries ?? [])] };
      },
    ],
  ];
}
