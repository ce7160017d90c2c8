import { randomBytes } from 'node:crypto';
import { encodeWAMessage, jidEncode, type BinaryNode, type proto } from '@whiskeysockets/baileys';
import { companionBundle, type SimUser } from './directory.js';
import { buildInboundMessage, type InboundInput, type InboundMedia } from './inbound-content.js';
import { signalAddress } from './phone-signal.js';
import { newMessageSecret } from './secret-edits.js';
import type { MediaHost } from './media-host.js';
import type { Reachout } from './reachout.js';
import type { DeliveryContext } from './sim-context.js';
import { newStanzaId, node, unixSeconds } from './stanza.js';
import { senderAttrs } from './lid-chats.js';
import { usernameAttrs } from './usernames.js';

/** What a contact's messages to an account need of the simulator. */
export interface InboundContext extends DeliveryContext {
  readonly media: MediaHost;
  readonly reachout: Reachout;
}

export interface InboundResult {
  id: string;
  deliveredTo: number[];
  /** Where the attachment was uploaded and what the receiver must decrypt to. */
  media?: InboundMedia;
  /** The messageSecret a text or an attachment carried (kept by the contact; not in the API's answer). */
  secret?: Buffer;
}

/**
 * The contact's phone trusts the account once it wrote to it: the server hands the account a
 * trusted-contact token (Baileys stores it under the contact's LID and attaches it as
 * `<tctoken>` to its own messages to that contact, which is what gets them past a reach-out lock).
 */
function privacyTokenNotification(contact: SimUser, account: SimUser, token: Buffer, t: string): BinaryNode {
  return node(
    'notification',
    {
      // a contact that hides its number is named by its LID alone
      ...(contact.hidePhone
        ? { from: jidEncode(contact.lid, 'lid') }
        : { from: jidEncode(contact.phone, 's.whatsapp.net'), sender_lid: jidEncode(contact.lid, 'lid') }),
      type: 'privacy_token',
      id: newStanzaId(),
      t: unixSeconds(),
    },
    // in this notification the token's jid names the receiving account, not the issuer
    [
      node('tokens', {}, [
        node('token', { jid: jidEncode(account.phone, 's.whatsapp.net'), t, type: 'trusted_contact' }, token),
      ]),
    ],
  );
}

/**
 * A contact's phone writes to an account: one Signal copy per linked companion device, built
 * from the prekeys that device uploaded. Offline devices get it after their next login.
 */
export async function sendFromContact(
  sim: InboundContext,
  contact: SimUser,
  account: SimUser,
  input: InboundInput,
  /** A message built elsewhere (an edit or a revoke, revisions.ts) instead of `input`'s. */
  prebuilt?: proto.IMessage,
): Promise<InboundResult> {
  const id = `3EB0${randomBytes(8).toString('hex').toUpperCase()}`;
  const built = prebuilt
    ? { message: prebuilt, media: undefined }
    : await buildInboundMessage(sim.media, contact, account, input);
  const { media } = built;
  // WhatsApp apps put a messageSecret on a message (what a secret-encrypted edit of it uses:
  // secret-edits.ts); on texts and attachments here.
  const secret = !prebuilt && (input.text !== undefined || input.attachment) ? newMessageSecret() : undefined;
  const message = secret
    ? { ...built.message, messageContextInfo: { ...built.message.messageContextInfo, messageSecret: secret } }
    : built.message;
  const plaintext = encodeWAMessage(message);
  const { token, t, untold } = sim.reachout.contactWrote(contact, account);
  const deliveredTo: number[] = [];
  for (const device of account.devices.values()) {
    if (untold.includes(device.id))
      sim.deliverToDevice(device, privacyTokenNotification(contact, account, token, t));
    const address = signalAddress(account.lid, device.id);
    if (!contact.signal.hasSession(address))
      await contact.signal.startSession(address, companionBundle(device));
    const { type, ciphertext } = await contact.signal.encrypt(address, plaintext);
    const enc = node(
      'enc',
      { v: '2', type, ...(media ? { mediatype: input.attachment!.type } : {}) },
      ciphertext,
    );
    sim.deliverToDevice(
      device,
      node(
        'message',
        {
          ...senderAttrs(contact),
          ...usernameAttrs(contact),
          id,
          type: media ? 'media' : 'text',
          t: unixSeconds(),
          notify: contact.name,
        },
        [enc],
      ),
    );
    deliveredTo.push(device.id);
  }
  return { id, deliveredTo, ...(media ? { media } : {}), ...(secret ? { secret } : {}) };
}
