import { createCipheriv, createHmac, randomBytes } from 'node:crypto';
import { jidEncode, proto } from '@whiskeysockets/baileys';
import type { SimUser } from './directory.js';
import { chatJidOf } from './lid-chats.js';
import { SimError } from './sim-error.js';

/**
 * A contact's edit in the secret-encrypted form (WhatsApp 2026; whatsmeow fcbcaad5, `msgsecret.go`):
 * WhatsApp Web sends it when the server flag `message_edit_to_message_secret_sender_enabled` is on.
 * The plain edit's `protocolMessage` (MESSAGE_EDIT, revisions.ts) is encrypted under the edited
 * message's `messageContextInfo.messageSecret` — whatsmeow's `decryptMsgSecret` in reverse (its
 * `encryptMsgSecret`): key HKDF-SHA256(secret, no salt, info = `<original id><original sender
 * JID><editor JID>Message Edit`, 32 bytes), AES-256-GCM with a random 12-byte IV, the tag after the
 * ciphertext, no additional data (`generateMsgSecretKey` binds it for "Poll Vote" and "Event
 * Response" only). The envelope, as whatsapp-rust's `build_secret_message_edit`
 * (WAWebGenerateSecretMessageEditProto): `secretEncryptedMessage { targetMessageKey, encPayload,
 * encIv, secretEncType: MESSAGE_EDIT }` with the original's secret in `messageContextInfo`.
 *
 * The editor is the contact as the message comes from (`from`, its chat JID). The original's sender
 * is the same JID unless `origSender` names the contact's other one (`phone` or `lid`): the case
 * whatsmeow e46d104e / 1c97bf40 retry for (the secret stored under the other addressing).
 */
export type SecretOrigSender = 'phone' | 'lid';

/** The contact's messageSecret of each message it sent (bounded), for its secret-encrypted edits. */
const secrets = new WeakMap<SimUser, Map<string, Buffer>>();
const MAX_REMEMBERED = 10_000;

/** A fresh messageSecret for a contact's message (WhatsApp apps put one on every message). */
export function newMessageSecret(): Buffer {
  return randomBytes(32);
}

export function rememberSecret(contact: SimUser, id: string, secret: Buffer): void {
  let kept = secrets.get(contact);
  if (!kept) secrets.set(contact, (kept = new Map()));
  kept.set(id, secret);
  if (kept.size > MAX_REMEMBERED) kept.delete(kept.keys().next().value!);
}

/** whatsmeow `generateMsgSecretKey` for a "Message Edit": the key (its additional data is empty). */
export function messageEditKey(secret: Buffer, origId: string, origSender: string, editor: string): Buffer {
  const prk = createHmac('sha256', Buffer.alloc(32)).update(secret).digest();
  const info = Buffer.from(`${origId}${origSender}${editor}Message Edit`);
  return createHmac('sha256', prk)
    .update(info)
    .update(Buffer.from([1]))
    .digest();
}

/** The secret-encrypted envelope of a plain edit (`edit`: revisions.ts `inboundRevision`'s message). */
export function secretEncryptedEdit(
  contact: SimUser,
  edit: proto.IMessage,
  origSender?: SecretOrigSender,
  iv: Buffer = randomBytes(12),
): proto.IMessage {
  const target = edit.protocolMessage?.key;
  const secret = target?.id ? secrets.get(contact)?.get(target.id) : undefined;
  if (!target?.id || !secret)
    throw new SimError(`message ${target?.id ?? ''} carried no messageSecret to encrypt its edit under`, 409);
  const editor = chatJidOf(contact);
  const orig =
    origSender === 'phone'
      ? jidEncode(contact.phone, 's.whatsapp.net')
      : origSender === 'lid'
        ? jidEncode(contact.lid, 'lid')
        : editor;
  const cipher = createCipheriv('aes-256-gcm', messageEditKey(secret, target.id, orig, editor), iv);
  const plaintext = proto.Message.encode(edit).finish();
  const encPayload = Buffer.concat([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
  return {
    secretEncryptedMessage: {
      targetMessageKey: target,
      encPayload,
      encIv: iv,
      secretEncType: proto.Message.SecretEncryptedMessage.SecretEncType.MESSAGE_EDIT,
    },
    messageContextInfo: { messageSecret: secret },
  };
}
