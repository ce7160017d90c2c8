import { getBinaryNodeChild, jidEncode, type BinaryNode } from '@whiskeysockets/baileys';
import type { DirectoryContext } from './sim-context.js';
import { bytesOf, node } from './stanza.js';

/**
 * A number lookup asked the 2026 way (whatsmeow 6e4c3416, "user: update IsOnWhatsApp query"): the
 * query's `<contact addressing_mode="lid"/>`. WhatsApp then names a number on WhatsApp by its LID,
 * with the phone JID beside it, and echoes the number asked in the `contact` child, as whatsmeow
 * reads the answer (d8960d95, "fix parsing not on whatsapp responses"):
 *
 *   `<user jid="<lid>@lid" pn_jid="<phone>@s.whatsapp.net"><contact type="in">+<phone>@c.us</contact></user>`
 *   `<user pn_jid="<phone>@s.whatsapp.net"><contact type="out">+<phone>@c.us</contact></user>` (not on WhatsApp: no `jid`)
 */
export function asksLidAddressing(usync: BinaryNode | undefined): boolean {
  const contact = getBinaryNodeChild(getBinaryNodeChild(usync, 'query'), 'contact');
  return contact?.attrs.addressing_mode === 'lid';
}

/** The answer for one number (a `user` without a `jid`, its `contact` child naming the number). */
export function lidAddressedContact(sim: DirectoryContext, request: BinaryNode): BinaryNode {
  const asked = bytesOf(getBinaryNodeChild(request, 'contact'))?.toString('utf8') ?? '';
  const phone = asked.replace('@c.us', '').replace(/[^0-9]/g, '');
  const user = sim.directory.lookupOrCreate(phone);
  const pnJid = jidEncode(phone, 's.whatsapp.net');
  const contact = node('contact', { type: user ? 'in' : 'out' }, asked);
  return user
    ? node('user', { jid: jidEncode(user.lid, 'lid'), pn_jid: pnJid }, [contact])
    : node('user', { pn_jid: pnJid }, [contact]);
}
