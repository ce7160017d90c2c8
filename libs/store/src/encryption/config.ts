import { inspect } from 'node:util';
import Joi from 'joi';
import { ConfigError, type Env } from '@mgw/common';

/** 1–16 characters: it is written into every sealed value, so it stays short and `:`-free. */
export const KEY_ID_PATTERN = /^[A-Za-z0-9_-]{1,16}$/;
export const KEY_BYTES = 32;

const GENERATE_HINT =
  'generate one with `npm run -s keys -- generate` (in a container: `node services/api/dist/cli/encryption.js generate`)';

/**
 * One AES-256 key and its id. The bytes never show up in logs or JSON (a config object may be
 * logged or dumped; the key must not go with it).
 */
export class EncryptionKey {
  readonly #bytes: Buffer;
  constructor(
    readonly id: string,
    bytes: Buffer,
  ) {
    if (!KEY_ID_PATTERN.test(id)) throw new Error('key id must be 1-16 characters of A-Z, a-z, 0-9, _ or -');
    if (bytes.length !== KEY_BYTES) throw new Error(`key must be ${KEY_BYTES} bytes`);
    this.#bytes = Buffer.from(bytes);
  }
  get bytes(): Buffer {
    return this.#bytes;
  }
  /** The `<id>:<base64>` line the variables hold. */
  toLine(): string {
    return `${this.id}:${this.#bytes.toString('base64')}`;
  }
  toJSON(): { id: string } {
    return { id: this.id };
  }
  [inspect.custom](): string {
    return `EncryptionKey(${this.id})`;
  }
}

/** Parses `<id>:<base64 of 32 bytes>`; the message never repeats the value (it is a secret). */
export function parseKeyLine(line: string): EncryptionKey {
  const at = line.indexOf(':');
  const id = at < 0 ? '' : line.slice(0, at);
  const b64 = at < 0 ? '' : line.slice(at + 1).trim();
  if (!KEY_ID_PATTERN.test(id)) {
    throw new Error('expected <keyId>:<base64 key> with a key id of 1-16 characters [A-Za-z0-9_-]');
  }
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64) || Buffer.from(b64, 'base64').length !== KEY_BYTES) {
    throw new Error(`key ${id} must be the base64 of exactly ${KEY_BYTES} random bytes`);
  }
  return new EncryptionKey(id, Buffer.from(b64, 'base64'));
}

const keyLine = Joi.string()
  .trim()
  .custom((value: string, helpers) => {
    try {
      return parseKeyLine(value);
    } catch (err) {
      return helpers.message({ custom: `{{#label}} is malformed: ${(err as Error).message}` });
    }
  });

const keyList = Joi.string()
  .allow('')
  .custom((value: string, helpers) => {
    const entries = value
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    const parsed: EncryptionKey[] = [];
    for (const [i, entry] of entries.entries()) {
      try {
        parsed.push(parseKeyLine(entry));
      } catch (err) {
        return helpers.message({
          custom: `{{#label}} entry ${i + 1} is malformed: ${(err as Error).message}`,
        });
      }
    }
    return parsed;
  });

/**
 * The key data at rest is sealed under (`<keyId>:<base64 of 32 bytes>`), and older keys still
 * accepted for reading while a rotation is under way. Required in every mode: a gateway that
 * silently wrote secrets in the clear would be worse than one that does not start.
 */
export const encryptionEnv: Joi.PartialSchemaMap = {
  MGW_ENCRYPTION_KEY: keyLine
    .empty('')
    .required()
    .messages({ 'any.required': `{{#label}} is required (the key for data at rest): ${GENERATE_HINT}` }),
  MGW_ENCRYPTION_OLD_KEYS: keyList.optional(),
};

export interface EncryptionConfig {
  /** Seals every write. */
  current: EncryptionKey;
  /** Open values sealed before a rotation; never used to seal. */
  old: EncryptionKey[];
}

export function encryptionConfig(e: Env): EncryptionConfig {
  const current = e.MGW_ENCRYPTION_KEY as EncryptionKey;
  const old = (e.MGW_ENCRYPTION_OLD_KEYS as EncryptionKey[] | undefined) ?? [];
  // One id must name one key, or a value would open under whichever came first.
  const seen = new Map<string, Buffer>([[current.id, current.bytes]]);
  const unique: EncryptionKey[] = [];
  for (const k of old) {
    const prior = seen.get(k.id);
    if (prior && !prior.equals(k.bytes)) {
      throw new ConfigError(
        `Invalid configuration: MGW_ENCRYPTION_OLD_KEYS: key id "${k.id}" is used twice for different keys (ids must be unique across MGW_ENCRYPTION_KEY and MGW_ENCRYPTION_OLD_KEYS)`,
      );
    }
    if (!prior) {
      seen.set(k.id, k.bytes);
      unique.push(k);
    }
  }
  return { current, old: unique };
}
