import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import { isBroadcastAddress, isGroupAddress, isPersonAddress, type ContactIdentity } from '@mgw/contracts';
import { jidNormalizedUser, normalizeMessageContent, proto, type WAMessage } from '@whiskeysockets/baileys';
import { contactOf, identityOfJids } from './inbound-message.js';
import { parseRevision, type InboundRevision } from './inbound-revision.js';

/**
 * Secret-encrypted messages (whatsmeow fcbcaad5, `msgsecret.go`): WhatsApp may send a change to an
 * earlier message — a contact's edit of its text (MESSAGE_EDIT), a poll's edit (POLL_EDIT) or an
 * option added to a poll (POLL_ADD_OPTION) — as a `secretEncryptedMessage` encrypted under the
 * earlier message's `messageContextInfo.messageSecret`, instead of a plain `protocolMessage`.
 *
 * The key, as whatsmeow's `generateMsgSecretKey`: HKDF-SHA256 of the secret (no salt) with the
 * info `<original id><original sender JID><modification sender JID><use case>` (JIDs without
 * device), 32 bytes; AES-256-GCM with a 12-byte IV and the 16-byte tag after the ciphertext. The
 * additional data is empty for every use case but "Poll Vote" and "Event Response"
 * (`<original id>\0<modification sender JID>`). The plaintext is a whole `Message`; a
 * MESSAGE_EDIT's is the same `protocolMessage` (MESSAGE_EDIT, `editedMessage`) a plain edit is.
 */
export type SecretUseCase =
  'Poll Vote' | 'Event Response' | 'Event Edit' | 'Message Edit' | 'Poll Edit' | 'Poll Add Option';

const SecretEncType = proto.Message.SecretEncryptedMessage.SecretEncType;
/** whatsmeow's SecretEncType numbers for what rc14's proto lacks (WAWebProtobufsE2E.proto). */
export const SECRET_ENC_POLL_EDIT = 4;
export const SECRET_ENC_POLL_ADD_OPTION = 5;

/**
 * The use case a `secretEncType` is decrypted under, as whatsmeow's `DecryptSecretEncryptedMessage`
 * maps it since fcbcaad5 (POLL_ADD_OPTION under "Poll Edit", as whatsmeow reads it); undefined for
 * one it does not decrypt.
 */
export function useCaseOf(type: number | null | undefined): SecretUseCase | undefined {
  if (type === SecretEncType.EVENT_EDIT) return 'Event Edit';
  if (type === SecretEncType.MESSAGE_EDIT) return 'Message Edit';
  if (type === SECRET_ENC_POLL_EDIT || type === SECRET_ENC_POLL_ADD_OPTION) return 'Poll Edit';
  return undefined;
}

/** The AES-256-GCM key and additional data of one modification (whatsmeow `generateMsgSecretKey`). */
export function messageSecretKey(
  useCase: SecretUseCase,
  origMsgId: string,
  origSenderJid: string,
  modificationSenderJid: string,
  secret: Uint8Array,
): { key: Buffer; additionalData: Buffer } {
  const orig = jidNormalizedUser(origSenderJid);
  const modifier = jidNormalizedUser(modificationSenderJid);
  const info = Buffer.from(`${origMsgId}${orig}${modifier}${useCase}`);
  // HKDF-SHA256 (RFC 5869), no salt (a hash length of zeros), one 32-byte block.
  const prk = createHmac('sha256', Buffer.alloc(32)).update(secret).digest();
  const key = createHmac('sha256', prk)
    .update(info)
    .update(Buffer.from([1]))
    .digest();
  const additionalData =
    useCase === 'Poll Vote' || useCase === 'Event Response'
      ? Buffer.from(`${origMsgId}\u0000${modifier}`)
      : Buffer.alloc(0);
  return { key, additionalData };
}

/** Encrypts a modification as its sender's app does (whatsmeow `encryptMsgSecret`): payload and IV. */
export function sealMessageSecret(
  plaintext: Uint8Array,
  k: { key: Buffer; additionalData: Buffer },
  iv: Buffer = randomBytes(12),
): { encPayload: Buffer; encIv: Buffer } {
  const cipher = createCipheriv('aes-256-gcm', k.key, iv);
  cipher.setAAD(k.additionalData);
  const encPayload = Buffer.concat([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
  return { encPayload, encIv: iv };
}

/** Decrypts a modification; undefined when the key does not open it (wrong secret or JIDs, tampered). */
export function openMessageSecret(
  encPayload: Uint8Array,
  encIv: Uint8Array,
  k: { key: Buffer; additionalData: Buffer },
): Buffer | undefined {
  if (encIv.length !== 12 || encPayload.length < 16) return undefined;
  try {
    const payload = Buffer.from(encPayload);
    const decipher = createDecipheriv('aes-256-gcm', k.key, encIv);
    decipher.setAAD(k.additionalData);
    decipher.setAuthTag(payload.subarray(payload.length - 16));
    return Buffer.concat([decipher.update(payload.subarray(0, payload.length - 16)), decipher.final()]);
  } catch {
    return undefined;
  }
}

/** A contact's secret-encrypted edit as it arrived: opened once its original's secret is found. */
export interface SecretEncryptedEdit {
  /** The WhatsApp id of the edit itself. */
  platformMessageId: string;
  /** Who sent it (as parseRevision names who revised). */
  contact: ContactIdentity;
  /** The WhatsApp id of the message it changes (`targetMessageKey.id`). */
  targetPlatformMessageId: string;
  /** MESSAGE_EDIT, POLL_EDIT or POLL_ADD_OPTION. */
  kind: 'message_edit' | 'poll_edit' | 'poll_add_option';
  encPayload: Uint8Array;
  encIv: Uint8Array;
  /** The modification sender's JIDs (the one the message came from first, then its alternative). */
  senderJids: string[];
  /** The original's sender as the target key names it (whatsmeow `getOrigSenderFromKey`). */
  keyOrigSenderJids: string[];
  /** What the plain path needs to read the opened message (the message's key and time). */
  waKey: { remoteJid: string; remoteJidAlt?: string; participant?: string; participantAlt?: string };
  messageTimestamp: number;
}

const userJids = (...jids: (string | null | undefined)[]): string[] => [
  ...new Set(jids.filter((j): j is string => !!j && isPersonAddress(j)).map((j) => jidNormalizedUser(j))),
];

const KINDS: Record<number, SecretEncryptedEdit['kind']> = {
  [SecretEncType.MESSAGE_EDIT]: 'message_edit',
  [SECRET_ENC_POLL_EDIT]: 'poll_edit',
  [SECRET_ENC_POLL_ADD_OPTION]: 'poll_add_option',
};

/**
 * A contact's `secretEncryptedMessage` of an edit kind (one-to-one or group; not ours, no
 * broadcast); undefined for anything else (EVENT_EDIT: the gateway keeps no events).
 */
export function parseSecretEdit(msg: WAMessage): SecretEncryptedEdit | undefined {
  if (msg.key.fromMe || !msg.key.id || !msg.message || !msg.key.remoteJid) return undefined;
  const enc = normalizeMessageContent(msg.message)?.secretEncryptedMessage;
  const kind = KINDS[enc?.secretEncType ?? -1];
  const target = enc?.targetMessageKey;
  if (!enc || !kind || !target?.id || !enc.encPayload || !enc.encIv) return undefined;
  const k = msg.key;
  if (isBroadcastAddress(k.remoteJid)) return undefined;
  const group = isGroupAddress(k.remoteJid);
  const contact = group ? identityOfJids(k.participant, k.participantAlt) : contactOf(k);
  if (!contact.phone && !contact.lid) return undefined;
  const senderJids = group
    ? userJids(k.participant, k.participantAlt)
    : userJids(k.remoteJid, k.remoteJidAlt);
  // whatsmeow getOrigSenderFromKey: fromMe (the sender's own message) is the sender; else the
  // key's chat (one-to-one) or its participant (group).
  const keyOrig = target.fromMe ? senderJids : userJids(group ? target.participant : target.remoteJid);
  return {
    platformMessageId: k.id!,
    contact,
    targetPlatformMessageId: target.id,
    kind,
    encPayload: enc.encPayload,
    encIv: enc.encIv,
    senderJids,
    keyOrigSenderJids: keyOrig,
    waKey: {
      remoteJid: k.remoteJid!,
      ...(k.remoteJidAlt ? { remoteJidAlt: k.remoteJidAlt } : {}),
      ...(k.participant ? { participant: k.participant } : {}),
      ...(k.participantAlt ? { participantAlt: k.participantAlt } : {}),
    },
    messageTimestamp: Number(msg.messageTimestamp ?? 0),
  };
}

/**
 * Opens a secret-encrypted edit with its original's secret: the original's sender is tried as the
 * target key names it and as the original's record does (`storedSenderJids`: phone and LID; the
 * both-senders retry of whatsmeow e46d104e / 1c97bf40), each with each of the sender's JIDs. A
 * MESSAGE_EDIT opens to the plain path's edit (parseRevision of the inner message, under the
 * envelope's key and time), naming the same target; undefined when nothing opens it or it is no
 * text edit of that message.
 */
export function openSecretEdit(
  edit: SecretEncryptedEdit,
  secret: Uint8Array,
  storedSenderJids: readonly string[] = [],
): InboundRevision | undefined {
  if (edit.kind !== 'message_edit') return undefined;
  const plaintext = openWithSenders(edit, 'Message Edit', secret, storedSenderJids);
  if (!plaintext) return undefined;
  let inner: proto.IMessage;
  try {
    inner = proto.Message.decode(plaintext);
  } catch {
    return undefined;
  }
  const p = normalizeMessageContent(inner)?.protocolMessage;
  if (p?.type !== proto.Message.ProtocolMessage.Type.MESSAGE_EDIT) return undefined;
  if (p.key?.id && p.key.id !== edit.targetPlatformMessageId) return undefined;
  const revision = parseRevision({
    key: { ...edit.waKey, id: edit.platformMessageId, fromMe: false },
    message: inner,
    messageTimestamp: edit.messageTimestamp,
  });
  return revision?.text === undefined ? undefined : revision;
}

/** The plaintext of an envelope under the first (original sender, modification sender) pair that opens it. */
export function openWithSenders(
  edit: Pick<
    SecretEncryptedEdit,
    'encPayload' | 'encIv' | 'targetPlatformMessageId' | 'senderJids' | 'keyOrigSenderJids'
  >,
  useCase: SecretUseCase,
  secret: Uint8Array,
  storedSenderJids: readonly string[],
): Buffer | undefined {
  const origins = [...new Set([...edit.keyOrigSenderJids, ...userJids(...storedSenderJids)])];
  for (const orig of origins) {
    for (const modifier of edit.senderJids) {
      const k = messageSecretKey(useCase, edit.targetPlatformMessageId, orig, modifier, secret);
      const opened = openMessageSecret(edit.encPayload, edit.encIv, k);
      if (opened) return opened;
    }
  }
  return undefined;
}
