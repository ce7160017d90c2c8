/**
 * The account's NCT salt ("non-contact token" salt, whatsmeow 82d579d5): a secret WhatsApp hands
 * the account's linked devices, from which a device makes the `<cstoken>` of a first contact
 * (first-contact.ts). It arrives in a history sync (`HistorySync` field 19, `nctSalt`) and in the
 * app-state mutation `nct_salt_sync` (SET stores it, REMOVE forgets it).
 *
 * Baileys rc14's protos have neither field (`HistorySync` 19, `SyncActionValue` 80: their decoders
 * skip them), so both are read from the bytes here: the inflated history, and the decrypted
 * mutation that the Baileys patch hands on with its operation (`nct-salt.sync`). The salt is kept per device in the device's auth keys
 * (`keys.authKeys(deviceId, 'nct-salt')`, one field): sealed with the device's Encryption as every
 * credential is, written under the lease epoch (a stale owner cannot write it), cached with the
 * other keys, and deleted with them (`purgeAuthState`: logout, unlink from the phone, a new pairing).
 */

/** The auth-key type the salt is kept under (one id: `salt`). */
export const NCT_SALT_TYPE = 'nct-salt';
const SALT_ID = 'salt';
/** `HistorySync.nctSalt` (WAWebProtobufsHistorySync.proto). */
const HISTORY_SYNC_NCT_SALT_FIELD = 19;
/** A salt is short; anything longer than this is not taken for one. */
const MAX_SALT_BYTES = 1024;

/** The part of an auth key store the salt needs: the device's own (sealed, fenced) store. */
export interface SaltKeyStore {
  get(type: string, ids: string[]): Promise<Record<string, unknown>>;
  set(data: Record<string, Record<string, unknown>>): Promise<void>;
  /** Reads keys into the key cache ahead of their lookups, counting no hit or miss (auth-state.ts). */
  warm(type: string, ids: string[]): Promise<void>;
}

/** Warms the salt's cache entry ahead of `readNctSalt`. */
export const warmNctSalt = (keys: SaltKeyStore): Promise<void> => keys.warm(NCT_SALT_TYPE, [SALT_ID]);

export async function readNctSalt(keys: SaltKeyStore): Promise<Buffer | undefined> {
  const value = (await keys.get(NCT_SALT_TYPE, [SALT_ID]))[SALT_ID];
  return value instanceof Uint8Array && value.length > 0 ? Buffer.from(value) : undefined;
}

/** Keeps `salt` (an empty one is ignored, as whatsmeow's storeNCTSalt does). */
export async function storeNctSalt(keys: SaltKeyStore, salt: Uint8Array): Promise<boolean> {
  if (salt.length === 0 || salt.length > MAX_SALT_BYTES) return false;
  await keys.set({ [NCT_SALT_TYPE]: { [SALT_ID]: Buffer.from(salt) } });
  return true;
}

export async function forgetNctSalt(keys: SaltKeyStore): Promise<void> {
  await keys.set({ [NCT_SALT_TYPE]: { [SALT_ID]: null } });
}

/** Field 19 of an encoded `HistorySync`, or undefined when it has none (or the bytes are not one). */
export function historySyncNctSalt(encoded: Uint8Array): Buffer | undefined {
  const salt = bytesField(encoded, HISTORY_SYNC_NCT_SALT_FIELD);
  return salt?.length && salt.length <= MAX_SALT_BYTES ? salt : undefined;
}

/** An app-state mutation `nct_salt_sync` as Baileys hands it on (the patch in chats.js). */
export interface NctSaltSyncMutation {
  /** SyncdOperation: 0 SET, 1 REMOVE. */
  operation: number;
  /** The decrypted `SyncActionData`. */
  syncActionData?: Uint8Array;
}

/** What a `nct_salt_sync` mutation says: a new salt (SET), or that there is none any more (REMOVE). */
export type NctSaltChange = { salt: Buffer } | { removed: true } | undefined;

/**
 * whatsmeow 82d579d5 (appstate.go): index `["nct_salt_sync"]`; SET stores
 * `action.nctSaltSyncAction.salt` (SyncActionData field 2 `value`, SyncActionValue field 80,
 * NctSaltSyncAction field 1), REMOVE forgets the salt. Undefined: a SET without a salt (ignored).
 */
export function nctSaltChangeOf(mutation: NctSaltSyncMutation): NctSaltChange {
  if (mutation.operation === 1) return { removed: true };
  if (mutation.operation !== 0 || !mutation.syncActionData) return undefined;
  const value = bytesField(mutation.syncActionData, 2);
  const action = value && bytesField(value, 80);
  const salt = action && bytesField(action, 1);
  return salt?.length && salt.length <= MAX_SALT_BYTES ? { salt } : undefined;
}

/**
 * The last length-delimited `field` of an encoded protobuf message (its top-level fields walked,
 * nothing decoded), or undefined when it has none or the bytes are not a protobuf message.
 */
function bytesField(encoded: Uint8Array, wanted: number): Buffer | undefined {
  let pos = 0;
  let found: Buffer | undefined;
  while (pos < encoded.length) {
    const key = readVarint(encoded, pos);
    if (!key) return undefined;
    pos = key.next;
    const field = Math.floor(key.value / 8);
    const wire = key.value % 8;
    if (wire === 0) {
      const skipped = readVarint(encoded, pos);
      if (!skipped) return undefined;
      pos = skipped.next;
    } else if (wire === 1 || wire === 5) {
      pos += wire === 1 ? 8 : 4;
    } else if (wire === 2) {
      const length = readVarint(encoded, pos);
      if (!length || length.next + length.value > encoded.length) return undefined;
      if (field === wanted) found = Buffer.from(encoded.subarray(length.next, length.next + length.value));
      pos = length.next + length.value;
    } else {
      return undefined; // groups (3, 4) are in none of these messages; anything else is not protobuf
    }
  }
  // A field given twice: the last one wins, as protobuf decoders read it.
  return pos === encoded.length ? found : undefined;
}

function readVarint(bytes: Uint8Array, start: number): { value: number; next: number } | undefined {
  let value = 0;
  let scale = 1;
  for (let pos = start; pos < bytes.length && pos < start + 10; pos++) {
    const byte = bytes[pos]!;
    value += (byte & 0x7f) * scale;
    scale *= 128;
    if (byte < 0x80) return { value, next: pos + 1 };
  }
  return undefined;
}

/**
 * Hands every `nct_salt_sync` app-state mutation of `sock` to `onChange` (the Baileys patch emits
 * them as `nct-salt.sync`; rc14 has no event for them).
 */
export function watchNctSaltSync(
  sock: { ev: { on(event: string, listener: (m: NctSaltSyncMutation) => void): unknown } },
  onChange: (change: NonNullable<NctSaltChange>) => void,
): void {
  sock.ev.on('nct-salt.sync', (mutation) => {
    const change = nctSaltChangeOf(mutation);
    if (change) onChange(change);
  });
}
