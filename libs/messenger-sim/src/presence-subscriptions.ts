import { jidDecode, jidEncode, type BinaryNode } from '@whiskeysockets/baileys';
import type { ClientConnection } from './client-connection.js';
import type { SimUser } from './directory.js';
import { profileOf } from './account-profile.js';
import type { DirectoryContext } from './sim-context.js';
import { SimError } from './sim-error.js';
import { node } from './stanza.js';

/**
 * Presence as WhatsApp's server handles it: a client's `<presence name type>` sets the account's
 * push name (what contacts see) and whether it is online; `<presence type=subscribe to>` subscribes
 * that connection to a contact's presence (answered at once with the contact's current presence;
 * it lasts while the connection does). A simulated contact's presence and chat states are driven
 * by the control API and reach the connections subscribed to it.
 */
export interface OnlineState {
  available: boolean;
  /** When it was last seen online (ms). */
  lastSeen?: number;
}

interface PresenceWorld {
  online: WeakMap<SimUser, OnlineState>;
  /** Connections subscribed to a user's presence, by the user's phone. */
  subscribers: Map<string, Set<ClientConnection>>;
}

const worlds = new WeakMap<DirectoryContext, PresenceWorld>();
/** Subscriptions one connection may hold (a client subscribes to the contacts it looks at). */
const MAX_SUBSCRIPTIONS_PER_CONNECTION = 1000;

function worldOf(sim: DirectoryContext): PresenceWorld {
  let world = worlds.get(sim);
  if (!world) worlds.set(sim, (world = { online: new WeakMap(), subscribers: new Map() }));
  return world;
}

export function onlineOf(sim: DirectoryContext, user: SimUser): OnlineState {
  return worldOf(sim).online.get(user) ?? { available: false };
}

/** A client's `<presence>` stanza. */
export function handlePresence(sim: DirectoryContext, conn: ClientConnection, stanza: BinaryNode): void {
  const account = conn.account;
  if (!account) return;
  const { type, name, to } = stanza.attrs;
  if (type === 'subscribe') return subscribe(sim, conn, to);
  if (name) account.name = name.slice(0, 25);
  if (type === 'available' || type === 'unavailable') setOnline(sim, account, type === 'available');
}

function subscribe(sim: DirectoryContext, conn: ClientConnection, to: string | undefined): void {
  const jid = jidDecode(to ?? '');
  const target = jid ? sim.directory.resolve(jid.user, jid.server) : undefined;
  if (!target || !to) return;
  const { subscribers } = worldOf(sim);
  let set = subscribers.get(target.phone);
  if (!set) subscribers.set(target.phone, (set = new Set()));
  for (const c of set) if (c.closed) set.delete(c);
  if (set.size >= MAX_SUBSCRIPTIONS_PER_CONNECTION) return;
  set.add(conn);
  conn.send(presenceStanza(sim, target, to));
}

/** `<presence from>` as a subscriber sees it: `type=unavailable` with `last` (or `deny`) when offline. */
function presenceStanza(sim: DirectoryContext, user: SimUser, from: string): BinaryNode {
  const state = onlineOf(sim, user);
  if (state.available) return node('presence', { from });
  const last =
    profileOf(user).shareLastSeen && state.lastSeen ? String(Math.floor(state.lastSeen / 1000)) : 'deny';
  return node('presence', { from, type: 'unavailable', last });
}

function setOnline(sim: DirectoryContext, user: SimUser, available: boolean): number {
  const world = worldOf(sim);
  const before = onlineOf(sim, user);
  world.online.set(user, { available, lastSeen: available ? before.lastSeen : Date.now() });
  return notify(sim, user, (jid) => presenceStanza(sim, user, jid));
}

/** Sends `build(jid the subscriber knows the user by)` to every live connection subscribed to `user`. */
function notify(
  sim: DirectoryContext,
  user: SimUser,
  build: (jid: string) => BinaryNode,
  only?: SimUser,
): number {
  const set = worldOf(sim).subscribers.get(user.phone);
  let sent = 0;
  for (const conn of set ?? []) {
    if (conn.closed) {
      set!.delete(conn);
      continue;
    }
    if (only && conn.account !== only) continue;
    conn.send(build(jidEncode(user.phone, 's.whatsapp.net')));
    sent++;
  }
  return sent;
}

export const CONTACT_PRESENCE_INPUTS = [
  'available',
  'unavailable',
  'composing',
  'recording',
  'paused',
] as const;
export type ContactPresenceInput = (typeof CONTACT_PRESENCE_INPUTS)[number];

/**
 * A simulated contact goes online or offline (its subscribers are told), or shows a chat state
 * (typing, recording, paused) in its chat with `to` (the connections of `to` subscribed to it are
 * told; optionally inside a group it shares with `to`). Answers how many connections were told.
 */
export function driveContactPresence(
  sim: DirectoryContext,
  input: { phone: string; presence: string; to?: string; groupId?: string; shareLastSeen?: boolean },
): { delivered: number } {
  const contact = sim.directory.get(input.phone);
  if (!contact) throw new SimError(`${input.phone} is not a contact`, 404);
  if (!CONTACT_PRESENCE_INPUTS.includes(input.presence as ContactPresenceInput))
    throw new SimError(`presence must be one of ${CONTACT_PRESENCE_INPUTS.join(', ')}`, 400);
  if (input.shareLastSeen !== undefined) profileOf(contact).shareLastSeen = input.shareLastSeen;
  const presence = input.presence as ContactPresenceInput;
  if (presence === 'available' || presence === 'unavailable')
    return { delivered: setOnline(sim, contact, presence === 'available') };
  if (!input.to) throw new SimError('to is required for a chat state', 400);
  const account = sim.directory.get(input.to);
  if (!account) throw new SimError(`unknown phone ${input.to}`, 404);
  const child =
    presence === 'recording'
      ? node('composing', { media: 'audio' })
      : node(presence === 'paused' ? 'paused' : 'composing');
  const delivered = notify(
    sim,
    contact,
    (jid) =>
      input.groupId
        ? node('chatstate', { from: input.groupId, participant: jid }, [child])
        : node('chatstate', { from: jid }, [child]),
    account,
  );
  return { delivered };
}
