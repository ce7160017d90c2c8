import { BufferJSON } from '@whiskeysockets/baileys';

/**
 * How a Signal key value is written before it is sealed (auth-state.ts). The sealed form is text
 * (`Encryption.sealText`: key rotation re-seals it as UTF-8 text), so the compact forms are text
 * too, but without JSON's per-Buffer wrapping:
 *
 *   `~k<base64 of private | public>`  a key pair of two 32-byte keys (a one-time pre-key): 88
 *                                     characters against ~125 as JSON
 *   `~b<base64>`                      bytes (a session record, a sender key)
 *   anything else                     JSON with Buffers as `{type: 'Buffer', data: <base64>}`
 *                                     (BufferJSON): every other value, and everything written by
 *                                     releases before the compact forms, read as it always was
 *
 * No JSON text starts with `~`, so an old value is never read as a compact one: an account linked
 * by an earlier release keeps working, and a key is rewritten compact the next time it is written.
 */
const KEY_PAIR = '~k';
const BYTES = '~b';
const KEY_BYTES = 32;

export function encodeAuthValue(value: unknown): string {
  if (value instanceof Uint8Array)
    return `${BYTES}${Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64')}`;
  if (isKeyPair(value))
    return `${KEY_PAIR}${Buffer.concat([value.private, value.public]).toString('base64')}`;
  return JSON.stringify(value, BufferJSON.replacer);
}

export function decodeAuthValue(text: string): unknown {
  if (text.startsWith(KEY_PAIR)) {
    const bytes = Buffer.from(text.slice(KEY_PAIR.length), 'base64');
    // Two buffers of their own, as JSON gave (nothing shares or outlives the other's memory).
    return {
      private: Buffer.from(bytes.subarray(0, KEY_BYTES)),
      public: Buffer.from(bytes.subarray(KEY_BYTES, 2 * KEY_BYTES)),
    };
  }
  if (text.startsWith(BYTES)) return Buffer.from(text.slice(BYTES.length), 'base64');
  return JSON.parse(text, BufferJSON.reviver);
}

/** Exactly `{ private, public }`, both 32 bytes: anything more would be lost by the compact form. */
function isKeyPair(value: unknown): value is { private: Uint8Array; public: Uint8Array } {
  if (!value || typeof value !== 'object') return false;
  const v = value as Record<string, unknown>;
  const names = Object.keys(v);
  return (
    names.length === 2 &&
    v.private instanceof Uint8Array &&
    v.public instanceof Uint8Array &&
    v.private.byteLength === KEY_BYTES &&
    v.public.byteLength === KEY_BYTES
  );
}
