import { keys } from '@mgw/contracts';

/**
 * Where a value lives, as associated data: the Redis key, plus the field for a hash. NUL cannot
 * occur in our keys, so no key/field pair reads as another.
 */
export function storageContext(key: string, field?: string): string {
  return field === undefined ? key : `${key}\0${field}`;
}

/**
 * A kind of Redis key whose values are sealed. `rotation.ts` scans these to count and re-encrypt
 * values, so every writer that seals must be listed here with the same form and context.
 */
export interface EncryptedFamily {
  name: string;
  /** SCAN MATCH pattern (built with the key builder, `*` for each variable part). */
  pattern: string;
  /** A string key holds one value; a hash holds one value per field. */
  type: 'string' | 'hash';
  /** `text`: sealText/openText (strings, JSON); `binary`: seal/open (blobs). */
  form: 'text' | 'binary';
  /**
   * Hashes that mix sealed and plain fields: only these fields are sealed, each in its own form
   * (the others — counters, flags — are left alone).
   */
  fields?: Record<string, 'text' | 'binary'>;
  /** Sealed fields named by a prefix (e.g. `vars:<messageId>`), each in its form. */
  fieldPrefixes?: Record<string, 'text' | 'binary'>;
  /** The context a value is sealed under (default: storageContext). */
  context?: (key: string, field?: string) => string;
  /**
   * What a legacy (unsealed) value becomes when it is sealed, when the writer changed its inner
   * form along with encryption (default: the same bytes).
   */
  fromLegacy?: (raw: Buffer) => Buffer;
}

export const ENCRYPTED_FAMILIES: readonly EncryptedFamily[] = [
  {
    name: 'auth-creds',
    pattern: keys.authCreds('*'),
    type: 'string',
    form: 'text',
  },
  {
    name: 'auth-keys',
    pattern: keys.authKeys('*', '*'),
    type: 'hash',
    form: 'text',
  },
  {
    // Sealed as the proto's bytes; before encryption the value was their base64 text.
    name: 'message-protos',
    pattern: keys.messageProto('*', '*'),
    type: 'string',
    form: 'binary',
    fromLegacy: (raw) => Buffer.from(raw.toString('latin1'), 'base64'),
  },
  {
    name: 'idempotency',
    pattern: keys.idempotency('*', '*'),
    type: 'string',
    form: 'text',
  },
  {
    // A request's content: its text/descriptor (body), base64 bytes (media) and a personalised
    // batch's variables (vars:<messageId>); the counters of the hash (remaining, bytes, heldUntil)
    // and attachmentError are not secret.
    name: 'contents',
    pattern: keys.content('*', '*'),
    type: 'hash',
    form: 'text',
    fields: { body: 'text', media: 'binary' },
    fieldPrefixes: { 'vars:': 'text' },
  },
  {
    // Messages contacts wrote (direction inbound): the text, the media reference (a Cloud API
    // device's: its media id at Meta, cloudMedia) and the messageSecret (msgSecret: opens a
    // secret-encrypted edit, secret-edit.ts); outbound records share the key pattern but have
    // neither field.
    name: 'inbound-messages',
    pattern: keys.message('*', '*'),
    type: 'hash',
    form: 'text',
    fields: {
      text: 'text',
      media: 'text',
      cloudMedia: 'text',
      kindBody: 'text',
      pollSecret: 'text',
      msgSecret: 'text',
      chat: 'text',
      revises: 'text',
    },
    // Message kinds (message-kinds-store.ts): each contact's poll vote and reaction; an edit's or
    // a delete's `revises` (what it changes, an edit's new text: message-kinds-store.ts).
    fieldPrefixes: { 'vote:': 'text', 'reaction:': 'text' },
  },
  {
    // A status update's audience (its viewers' JIDs: who the account shares its statuses with);
    // its size, view count and each view (`v:<jid>` -> time) are not sealed.
    name: 'status-records',
    pattern: keys.statusRecord('*', '*'),
    type: 'hash',
    form: 'text',
    fields: { audience: 'text' },
  },
  {
    // A device's webhook: its signing secrets (the URL, events and counters are not secret).
    name: 'webhooks',
    pattern: keys.webhook('*'),
    type: 'hash',
    form: 'text',
    fields: { secret: 'text', previousSecret: 'text' },
  },
  {
    // Media objects kept in Redis (no MEDIA_STORE): the file's bytes.
    name: 'media-blobs',
    pattern: keys.mediaBlob('*', '*'),
    type: 'string',
    form: 'binary',
  },
  {
    // A chat of the device's chat index (chats/chat-index.ts): a group's subject (the group's own
    // text) and the start of its last inbound text; the other fields (ids, times, counters) are not secret.
    name: 'chats',
    pattern: keys.chat('*', '*'),
    type: 'hash',
    form: 'text',
    fields: { subject: 'text', lastPreview: 'text' },
  },
  {
    // A device's settings: the text a rejected caller is answered with (chats/account-settings.ts);
    // the policy overrides and flags beside it are not secret.
    name: 'device-settings',
    pattern: keys.deviceSettings('*'),
    type: 'hash',
    form: 'text',
    fields: { rejectCallMessage: 'text' },
  },
  {
    // The account's WhatsApp Business labels (labels/label-store.ts): each label's name, colour
    // and predefined id as one JSON per field (the label id); the chats of a label are not sealed.
    name: 'labels',
    pattern: keys.labels('*'),
    type: 'hash',
    form: 'text',
  },
  {
    // A device's proxy: its URL may carry the proxy's user name and password.
    name: 'device-proxies',
    pattern: keys.deviceProxy('*'),
    type: 'string',
    form: 'text',
  },
  {
    // A Cloud API device's configuration: its access token, app secret and verify token.
    name: 'cloud-devices',
    pattern: keys.cloudDevice('*'),
    type: 'string',
    form: 'text',
  },
];

/** The form of one stored value of a family, or undefined when that field is not sealed. */
export function formOf(family: EncryptedFamily, field?: string): 'text' | 'binary' | undefined {
  if (field === undefined || !family.fields) return family.form;
  if (Object.hasOwn(family.fields, field)) return family.fields[field];
  for (const [prefix, form] of Object.entries(family.fieldPrefixes ?? {}))
    if (field.startsWith(prefix)) return form;
  return undefined;
}
