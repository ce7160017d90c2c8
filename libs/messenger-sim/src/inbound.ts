import { randomBytes } from 'node:crypto';
import { encodeWAMessage, jidEncode } from '@whiskeysockets/baileys';
import { unixSeconds } from './client-connection.js';
import { companionBundle, type SimUser } from './directory.js';
import { signalAddress } from './phone-signal.js';
import type { Simulator } from './simulator.js';
import { node } from './stanza.js';

export interface InboundResult {
  id: string;
  deliveredTo: number[];
}

/**
 * A contact's phone writes to an account: one Signal copy per linked companion device, built
 * from the prekeys that device uploaded. Offline devices get it after their next login.
 */
export async function sendFromContact(
  sim: Simulator,
  contact: SimUser,
  account: SimUser,
  text: string,
): Promise<InboundResult> {
  const id = `3EB0${randomBytes(8).toString('hex').toUpperCase()}`;
  const plaintext = encodeWAMessage({ conversation: text });
  const deliveredTo: number[] = [];
  for (const device of account.devices.values()) {
    const address = signalAddress(account.lid, device.id);
    if (!contact.signal.hasSession(address))
      await contact.signal.startSession(address, companionBundle(device));
    const { type, ciphertext } = await contact.signal.encrypt(address, plaintext);
    sim.deliverToDevice(
      device,
      node(
        'message',
        {
          from: jidEncode(contact.phone, 's.whatsapp.net'),
          id,
          type: 'text',
          t: unixSeconds(),
          notify: contact.name,
        },
        [node('enc', { v: '2', type }, ciphertext)],
      ),
    );
    deliveredTo.push(device.id);
  }
  return { id, deliveredTo };
}
