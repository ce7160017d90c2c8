import { getBinaryNodeChildren, jidDecode, type BinaryNode } from '@whiskeysockets/baileys';
import type { ClientConnection } from './client-connection.js';
import type { DirectoryContext } from './sim-context.js';

/** A chat state a linked device showed a contact ("typing…"), as the contact's phone saw it. */
export interface PresenceUpdate {
  /** The account whose device sent it. */
  from: string;
  /** `composing` (typing), `recording` (a voice note), or `paused`. */
  state: string;
  at: string;
}

const MAX_UPDATES = 1000;
const updatesBySim = new WeakMap<DirectoryContext, Map<string, PresenceUpdate[]>>();

function updatesOf(sim: DirectoryContext): Map<string, PresenceUpdate[]> {
  let updates = updatesBySim.get(sim);
  if (!updates) updatesBySim.set(sim, (updates = new Map()));
  return updates;
}

/**
 * A `<chatstate to=…><composing/></chatstate>` stanza from a linked device (Baileys'
 * sendPresenceUpdate): recorded for the contact it names, newest last, bounded per contact.
 */
export function recordChatState(sim: DirectoryContext, conn: ClientConnection, stanza: BinaryNode): void {
  const from = conn.account?.phone;
  const to = jidDecode(stanza.attrs.to ?? '');
  const child = getBinaryNodeChildren(stanza, 'composing')[0] ?? getBinaryNodeChildren(stanza, 'paused')[0];
  if (!from || !to || !child) return;
  const contact = sim.directory.resolve(to.user, to.server);
  if (!contact) return;
  const state = child.tag === 'composing' && child.attrs.media === 'audio' ? 'recording' : child.tag;
  const updates = updatesOf(sim);
  let list = updates.get(contact.phone);
  if (!list) updates.set(contact.phone, (list = []));
  if (list.push({ from, state, at: new Date().toISOString() }) > MAX_UPDATES) list.shift();
}

/** The chat states shown to `phone`, oldest first. */
export function presenceOf(sim: DirectoryContext, phone: string): PresenceUpdate[] {
  return [...(updatesOf(sim).get(phone) ?? [])];
}

export function clearPresence(sim: DirectoryContext, phone: string): void {
  updatesOf(sim).delete(phone);
}
