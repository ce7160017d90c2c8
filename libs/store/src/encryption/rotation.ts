import { Cluster, type Redis } from 'ioredis';
import { scriptPipeline } from '@mgw/common';
import { storeScript } from '../lua.js';
import type { Encryption } from './encryption.js';
import { ENCRYPTED_FAMILIES, formOf, storageContext, type EncryptedFamily } from './families.js';

/**
 * Key rotation over Redis: count sealed values per key id (`encryptionStatus`) and rewrite every
 * value of every encrypted family under the current key (`reencrypt`).
 *
 * SCAN sees only the node it is sent to, so the scan runs per node: the one server, or every
 * master of a Cluster. Reads and compare-and-set writes go to the node that returned the key.
 */
export function scanNodes(redis: Redis | Cluster): Redis[] {
  return redis instanceof Cluster ? redis.nodes('master') : [redis];
}

/** One stored value: a string key's value, or one field of a hash. */
export interface StoredValue {
  key: string;
  field?: string;
  raw: Buffer;
}

const SCAN_COUNT = 500;

/** Every value of `family` on `node`, one SCAN batch at a time. */
export async function* scanFamily(node: Redis, family: EncryptedFamily): AsyncGenerator<StoredValue[]> {
  let cursor = '0';
  do {
    const [next, found] = await node.scan(
      cursor,
      'MATCH',
      family.pattern,
      'COUNT',
      SCAN_COUNT,
      'TYPE',
      family.type,
    );
    cursor = next;
    if (found.length === 0) continue;
    const pipe = node.pipeline();
    for (const key of found) {
      if (family.type === 'string') pipe.getBuffer(key);
      else pipe.hgetallBuffer(key);
    }
    const replies = (await pipe.exec()) ?? [];
    const batch: StoredValue[] = [];
    found.forEach((key, i) => {
      const [err, value] = replies[i] ?? [];
      if (err || value === null || value === undefined) return; // gone since the scan: nothing to do
      if (family.type === 'string') batch.push({ key, raw: value as Buffer });
      else {
        for (const [field, raw] of Object.entries(value as Record<string, Buffer>))
          if (formOf(family, field)) batch.push({ key, field, raw });
      }
    });
    if (batch.length > 0) yield batch;
  } while (cursor !== '0');
}

export interface FamilyStatus {
  family: string;
  /** Sealed values by key id. */
  sealed: Record<string, number>;
  /** Values not sealed (written before encryption, or by an older version). */
  plaintext: number;
  /** Values that look sealed but whose header cannot be read. */
  malformed: number;
}

/** Counts, without decrypting anything, what each family holds under which key. */
export async function encryptionStatus(
  redis: Redis | Cluster,
  enc: Encryption,
  families: readonly EncryptedFamily[] = ENCRYPTED_FAMILIES,
): Promise<FamilyStatus[]> {
  const out: FamilyStatus[] = [];
  for (const family of families) {
    const status: FamilyStatus = { family: family.name, sealed: {}, plaintext: 0, malformed: 0 };
    for (const node of scanNodes(redis)) {
      for await (const batch of scanFamily(node, family)) {
        for (const { raw, field } of batch) {
          const value = formOf(family, field) === 'text' ? raw.toString('utf8') : raw;
          if (!enc.isSealed(value)) status.plaintext += 1;
          else {
            const id = enc.keyIdOf(value);
            if (id === undefined) status.malformed += 1;
            else status.sealed[id] = (status.sealed[id] ?? 0) + 1;
          }
        }
      }
    }
    out.push(status);
  }
  return out;
}

/**
 * Write `next` only while the value is still `expected`: a concurrent writer always wins (see
 * `lua/encryption-reseal-string-1.lua` and `lua/encryption-reseal-field-1.lua`).
 */
const CAS_STRING = storeScript<number>('encryption-reseal-string-1');
const CAS_FIELD = storeScript<number>('encryption-reseal-field-1');

export interface ReencryptResult {
  family: string;
  /** Rewritten under the current key (from an old key or from plaintext). */
  rewritten: number;
  /** Already under the current key. */
  current: number;
  /** Changed by another writer between our read and our write: left as that writer stored it. */
  changed: number;
  /** Could not be opened (unknown key, tampered, malformed): left untouched. */
  failed: number;
  /** The first few reasons, for the operator. */
  errors: string[];
}

export interface ReencryptOptions {
  families?: readonly EncryptedFamily[];
  /** Runs after a batch is read and before its writes (tests use it to race a writer). */
  beforeWrite?: (batch: StoredValue[]) => Promise<void>;
}

/** Rewrites every value not under the current key; compare-and-set per key / field. */
export async function reencrypt(
  redis: Redis | Cluster,
  enc: Encryption,
  opts: ReencryptOptions = {},
): Promise<ReencryptResult[]> {
  const out: ReencryptResult[] = [];
  for (const family of opts.families ?? ENCRYPTED_FAMILIES) {
    const result: ReencryptResult = {
      family: family.name,
      rewritten: 0,
      current: 0,
      changed: 0,
      failed: 0,
      errors: [],
    };
    const contextOf = family.context ?? storageContext;
    for (const node of scanNodes(redis)) {
      for await (const batch of scanFamily(node, family)) {
        const writes: { value: StoredValue; next: Buffer }[] = [];
        for (const value of batch) {
          try {
            const next = resealed(enc, family, value, contextOf(value.key, value.field));
            if (next) writes.push({ value, next });
            else result.current += 1;
          } catch (err) {
            result.failed += 1;
            if (result.errors.length < 5) result.errors.push((err as Error).message);
          }
        }
        if (writes.length === 0) continue;
        await opts.beforeWrite?.(batch);
        const pipe = scriptPipeline(node, CAS_STRING, CAS_FIELD);
        for (const { value, next } of writes) {
          if (value.field === undefined) CAS_STRING.queue(pipe, [value.key], [value.raw, next]);
          else CAS_FIELD.queue(pipe, [value.key], [value.field, value.raw, next]);
        }
        const replies = (await pipe.exec()) ?? [];
        for (const [err, applied] of replies) {
          if (err) throw err;
          if (applied === 1) result.rewritten += 1;
          else result.changed += 1;
        }
      }
    }
    out.push(result);
  }
  return out;
}

/** The value sealed under the current key, or undefined when it already is. */
function resealed(
  enc: Encryption,
  family: EncryptedFamily,
  value: StoredValue,
  context: string,
): Buffer | undefined {
  if (formOf(family, value.field) === 'text') {
    const text = value.raw.toString('utf8');
    if (enc.keyIdOf(text) === enc.currentKeyId) return undefined;
    const plain = enc.isSealed(text) ? enc.openText(text, context) : legacyText(family, value.raw);
    return Buffer.from(enc.sealText(plain, context), 'utf8');
  }
  if (enc.keyIdOf(value.raw) === enc.currentKeyId) return undefined;
  const plain = enc.isSealed(value.raw)
    ? enc.open(value.raw, context)
    : (family.fromLegacy?.(value.raw) ?? value.raw);
  return enc.seal(plain, context);
}

function legacyText(family: EncryptedFamily, raw: Buffer): string {
  return (family.fromLegacy?.(raw) ?? raw).toString('utf8');
}
