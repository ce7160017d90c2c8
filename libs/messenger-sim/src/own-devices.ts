import { companionBundle, type SimUser } from './directory.js';
import { senderAttrs } from './lid-chats.js';
import { signalAddress } from './phone-signal.js';
import type { DeliveryContext } from './sim-context.js';
import { newStanzaId, node, unixSeconds } from './stanza.js';

/**
 * The phone sends its own linked devices a peer message (`category="peer"`: only the account's own
 * devices accept it, e.g. the app-state key share or a history sync notification), Signal-encrypted
 * to each. Answers how many devices it was sent to.
 */
export async function sendToOwnDevices(
  sim: DeliveryContext,
  user: SimUser,
  message: Uint8Array,
): Promise<number> {
  let sent = 0;
  for (const device of user.devices.values()) {
    const address = signalAddress(user.lid, device.id);
    if (!user.signal.hasSession(address)) await user.signal.startSession(address, companionBundle(device));
    const { type, ciphertext } = await user.signal.encrypt(address, message);
    sim.deliverToDevice(
      device,
      node(
        'message',
        { ...senderAttrs(user), id: newStanzaId(), type: 'text', category: 'peer', t: unixSeconds() },
        [node('enc', { v: '2', type }, ciphertext)],
      ),
    );
    sent += 1;
  }
  return sent;
}
