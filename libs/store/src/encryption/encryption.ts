import { createCipheriv, createDecipheriv, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';
import { validateEnv } from '@mgw/common';
import { encryptionConfig, encryptionEnv, type EncryptionConfig } from './config.js';

/**
 * Authenticated encryption of values at rest: AES-256-GCM (node:crypto), a fresh random 12-byte
 * IV per value, a 16-byte tag. Every sealed value names its format version and key id, so keys
 * can be rotated (old keys stay readable), and is bound to where it is stored by associated data
 * (`context`, e.g. the Redis key and hash field): a value copied to another key does not open.
 *
 * Two encodings of the same thing:
 *   binary (blobs):  E5 6E 63 | version | id length | id | iv | ciphertext | tag
 *   text (strings):  enc1:<keyId>:<base64url(iv | ciphertext | tag)>
 * A value in neither form is legacy plaintext (written before encryption existed): it is read
 * as is, so an upgrade keeps working until `reencrypt` converts it; every write seals.
 */
const MAGIC = Buffer.from([0xe5, 0x6e, 0x63]);
const VERSION = 1;
const TEXT_PREFIX = `enc${VERSION}:`;
const TEXT_SEALED = /^enc(\d+):/;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const ALGORITHM = 'aes-256-gcm';

/**
 * Fresh random IVs, drawn from a pool filled 512 at a time: one call into the CSPRNG per 512
 * seals instead of one per seal (as `randomUUID` does). Every IV is used once.
 */
const ivPool = { bytes: Buffer.alloc(0), offset: 0 };
function freshIv(): Buffer {
  if (ivPool.offset + IV_BYTES > ivPool.bytes.length) {
    ivPool.bytes = randomBytes(IV_BYTES * 512);
    ivPool.offset = 0;
  }
  const iv = ivPool.bytes.subarray(ivPool.offset, ivPool.offset + IV_BYTES);
  ivPool.offset += IV_BYTES;
  return iv;
}

export type SealedValueProblem =
  'unknown_key' | 'authentication_failed' | 'malformed' | 'unsupported_version';

/** A sealed value that cannot be opened. Never carries the value or any part of the plaintext. */
export class SealedValueError extends Error {
  override name = 'SealedValueError';
  constructor(
    readonly problem: SealedValueProblem,
    readonly context: string,
    readonly keyId?: string,
  ) {
    super(`${DESCRIBE[problem](keyId)} (stored at ${JSON.stringify(context)})`);
  }
}

const DESCRIBE: Record<SealedValueProblem, (keyId?: string) => string> = {
  unknown_key: (id) =>
    `sealed value under key "${id}", which is neither MGW_ENCRYPTION_KEY nor in MGW_ENCRYPTION_OLD_KEYS`,
  authentication_failed: () =>
    'sealed value failed authentication (tampered with, moved from another key, or a different key under the same id)',
  malformed: () => 'sealed value is malformed',
  unsupported_version: () => 'sealed value has an unsupported format version',
};

interface Parts {
  version: number;
  keyId: string;
  /** iv | ciphertext | tag */
  body: Buffer;
}

export class Encryption {
  /** Key objects made once: a raw key handed to each cipher is imported again every time (slow). */
  private readonly keys = new Map<string, KeyObject>();
  private readonly current: { id: string; key: KeyObject };

  private constructor(cfg: EncryptionConfig) {
    for (const k of [cfg.current, ...cfg.old])
      if (!this.keys.has(k.id)) this.keys.set(k.id, createSecretKey(k.bytes));
    this.current = { id: cfg.current.id, key: this.keys.get(cfg.current.id)! };
  }

  static fromConfig(cfg: EncryptionConfig): Encryption {
    return new Encryption(cfg);
  }

  /** From MGW_ENCRYPTION_KEY / MGW_ENCRYPTION_OLD_KEYS (CLIs and tests; services use their config). */
  static fromEnv(env: NodeJS.ProcessEnv = process.env): Encryption {
    return new Encryption(encryptionConfig(validateEnv([encryptionEnv], env)));
  }

  /** The id every new value is sealed under. */
  get currentKeyId(): string {
    return this.current.id;
  }

  /** True when values sealed under `keyId` can be opened here. */
  knows(keyId: string): boolean {
    return this.keys.has(keyId);
  }

  seal(plain: Buffer, context: string): Buffer {
    const id = Buffer.from(this.current.id, 'ascii');
    const header = Buffer.concat([MAGIC, Buffer.from([VERSION, id.length]), id]);
    return Buffer.concat([header, this.encrypt(plain, context)]);
  }

  sealText(plain: string, context: string): string {
    const body = this.encrypt(Buffer.from(plain, 'utf8'), context);
    return `${TEXT_PREFIX}${this.current.id}:${body.toString('base64url')}`;
  }

  /** The plaintext of a sealed value; a value that is not sealed (legacy) comes back as is. */
  open(sealed: Buffer, context: string): Buffer {
    const parts = parseBinary(sealed, context);
    return parts ? this.decrypt(parts, context) : sealed;
  }

  openText(sealed: string, context: string): string {
    const parts = parseText(sealed, context);
    return parts ? this.decrypt(parts, context).toString('utf8') : sealed;
  }

  /** The key id a value was sealed under, or undefined when it is not sealed (or malformed). */
  keyIdOf(value: Buffer | string): string | undefined {
    try {
      const parts = typeof value === 'string' ? parseText(value, '') : parseBinary(value, '');
      return parts?.keyId;
    } catch {
      return undefined;
    }
  }

  isSealed(value: Buffer | string): boolean {
    return typeof value === 'string'
      ? TEXT_SEALED.test(value)
      : value.length >= MAGIC.length && value.subarray(0, MAGIC.length).equals(MAGIC);
  }

  private encrypt(plain: Buffer, context: string): Buffer {
    const iv = freshIv();
    const cipher = createCipheriv(ALGORITHM, this.current.key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(aad(VERSION, this.current.id, context));
    const ciphertext = Buffer.concat([cipher.update(plain), cipher.final()]);
    return Buffer.concat([iv, ciphertext, cipher.getAuthTag()]);
  }

  private decrypt({ version, keyId, body }: Parts, context: string): Buffer {
    if (version !== VERSION) throw new SealedValueError('unsupported_version', context, keyId);
    const key = this.keys.get(keyId);
    if (!key) throw new SealedValueError('unknown_key', context, keyId);
    if (body.length < IV_BYTES + TAG_BYTES) throw new SealedValueError('malformed', context, keyId);
    const iv = body.subarray(0, IV_BYTES);
    const tag = body.subarray(body.length - TAG_BYTES);
    const decipher = createDecipheriv(ALGORITHM, key, iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(aad(version, keyId, context));
    decipher.setAuthTag(tag);
    try {
      return Buffer.concat([
        decipher.update(body.subarray(IV_BYTES, body.length - TAG_BYTES)),
        decipher.final(),
      ]);
    } catch {
      throw new SealedValueError('authentication_failed', context, keyId);
    }
  }
}

/** Version and key id are authenticated too: a header edited to another key id does not open. */
function aad(version: number, keyId: string, context: string): Buffer {
  return Buffer.from(`mgw-enc\0${version}\0${keyId}\0${context}`, 'utf8');
}

function parseBinary(value: Buffer, context: string): Parts | undefined {
  if (value.length < MAGIC.length || !value.subarray(0, MAGIC.length).equals(MAGIC)) return undefined;
  const at = MAGIC.length;
  if (value.length < at + 2) throw new SealedValueError('malformed', context);
  const version = value[at]!;
  const idLength = value[at + 1]!;
  const keyId = value.subarray(at + 2, at + 2 + idLength).toString('ascii');
  if (idLength === 0 || keyId.length !== idLength) throw new SealedValueError('malformed', context);
  return { version, keyId, body: value.subarray(at + 2 + idLength) };
}

function parseText(value: string, context: string): Parts | undefined {
  const m = TEXT_SEALED.exec(value);
  if (!m) return undefined;
  const rest = value.slice(m[0].length);
  const colon = rest.indexOf(':');
  const b64 = rest.slice(colon + 1);
  if (colon <= 0 || !/^[A-Za-z0-9_-]*$/.test(b64)) throw new SealedValueError('malformed', context);
  return { version: Number(m[1]), keyId: rest.slice(0, colon), body: Buffer.from(b64, 'base64url') };
}
