import { jidEncode, type BinaryNode } from '@whiskeysockets/baileys';
import type { SimUser } from './directory.js';
import type { DeliveryContext } from './sim-context.js';
import { newStanzaId, node, unixSeconds } from './stanza.js';

/**
 * LID-addressed one-to-one chats. WhatsApp moves a chat to LID addressing (`<lid>@lid`) and then
 * names the contact by its LID in the stanzas of that chat: messages come `from` the LID with the
 * number as `sender_pn` (absent when the contact hides its number), receipts come from the LID.
 * A contact with `addressing: 'lid'` or `hidePhone` is simulated so; `lid-mapping` notifications
 * (`NotificationLinkedProfilesUpdates`) tell an account a contact's phone <-> LID pair.
 */

/** The contact's chat addressed by LID (a LID-addressed chat, or a contact that hides its number). */
export function lidAddressed(user: SimUser): boolean {
  return user.addressing === 'lid' || user.hidePhone;
}

/** The JID a contact's chat is addressed by. */
export function chatJidOf(user: SimUser): string {
  return lidAddressed(user) ? jidEncode(user.lid, 'lid') : jidEncode(user.phone, 's.whatsapp.net');
}

/**
 * The addressing attributes of a stanza from `contact`: `from` its chat JID; a LID chat adds
 * `addressing_mode="lid"` and, unless the contact hides its number, `sender_pn`.
 */
export function senderAttrs(contact: SimUser): Record<string, string> {
  if (!lidAddressed(contact)) return { from: chatJidOf(contact) };
  return {
    from: chatJidOf(contact),
    addressing_mode: 'lid',
    ...(contact.hidePhone ? {} : { sender_pn: jidEncode(contact.phone, 's.whatsapp.net') }),
  };
}

/** A `lid-mapping` notification: the server tells the account `contact`'s phone <-> LID pair. */
function lidMappingNotification(contact: SimUser): BinaryNode {
  const data = {
    xwa2_notify_linked_profiles: {
      jid: jidEncode(contact.lid, 'lid'),
      added_profiles: [{ pn: jidEncode(contact.phone, 's.whatsapp.net') }],
    },
  };
  return node('notification', { from: 's.whatsapp.net', type: 'mex', id: newStanzaId(), t: unixSeconds() }, [
    node('update', { op_name: 'NotificationLinkedProfilesUpdates' }, Buffer.from(JSON.stringify({ data }))),
  ]);
}

/** Sends the notification to every linked device of `account`; answers how many got it (now or at login). */
export function notifyLidMapping(sim: DeliveryContext, contact: SimUser, account: SimUser): number {
  for (const device of account.devices.values()) sim.deliverToDevice(device, lidMappingNotification(contact));
  return account.devices.size;
}
