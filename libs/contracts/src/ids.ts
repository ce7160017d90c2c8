import { createHash, randomBytes, randomFillSync, randomUUID } from 'node:crypto';

/** Our message id (returned by /send and /otp). A UUID: no ':' so it is a valid BullMQ job id. */
export function newMessageId(): string {
  return randomUUID();
}

/**
 * The `n`th id of an idempotent request (`Idempotency-Key`), from the seed its key keeps: every run
 * of the key makes the same ids, so a retry after an answer that never came finds what the first
 * run wrote instead of writing it twice. A UUID's shape (version 4 bits), as `newMessageId`.
 */
export function seededMessageId(seed: string, n: number | string): string {
  const h = createHash('sha256').update(`${seed}:${n}`).digest('hex');
  const variant = ((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** Same shape as Baileys' generateMessageIDV2: "3EB0" + 18 upper-case hex digits. */
function formatPlatformId(hex: string): string {
  return '3EB0' + hex.slice(0, 18).toUpperCase();
}

/**
 * Random bytes for platform ids, drawn from the CSPRNG a pool at a time (as `randomUUID` does):
 * one `randomBytes(9)` per message cost more than the rest of its id. Each byte is used once.
 */
const PLATFORM_ID_BYTES = 9;
const pool = Buffer.alloc(PLATFORM_ID_BYTES * 512);
let poolAt = pool.length;

/**
 * The WhatsApp message id, decided when the job is created so that a retried job re-sends the
 * same message (WhatsApp and the recipient de-duplicate by id) instead of a second one.
 */
export function newPlatformMessageId(): string {
  if (poolAt + PLATFORM_ID_BYTES > pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  const hex = pool.toString('hex', poolAt, poolAt + PLATFORM_ID_BYTES);
  poolAt += PLATFORM_ID_BYTES;
  return formatPlatformId(hex);
}

/**
 * A WhatsApp message id derived from another one (e.g. the text that follows a media message),
 * stable across retries so the derived message is re-sent rather than sent anew.
 */
export function derivedPlatformMessageId(platformMessageId: string, purpose: string): string {
  return formatPlatformId(createHash('sha256').update(`${platformMessageId}:${purpose}`).digest('hex'));
}

/** Token ids shown by the token CLI (never the token value). */
export function newTokenId(): string {
  return 'tok_' + randomBytes(6).toString('hex');
}

/** API token values: 32 random bytes, URL-safe. */
export function newTokenValue(): string {
  return 'mgw_' + randomBytes(32).toString('base64url');
}

/** Admin API token ids (`token admin-list`), apart from API token ids so neither is taken for the other. */
export function newAdminTokenId(): string {
  return 'adm_' + randomBytes(6).toString('hex');
}

/** Admin API token values: 32 random bytes, URL-safe; the prefix tells a leaked one from an API token. */
export function newAdminTokenValue(): string {
  return 'mgwadm_' + randomBytes(32).toString('base64url');
}

/**
 * The id of a device a workspace token creates (docs/workspaces.md): random, so that a workspace
 * never learns which ids another holds (a chosen id that is taken would tell it). A device id slug.
 */
export function newWorkspaceDeviceId(): string {
  return 'd' + randomBytes(8).toString('hex');
}
