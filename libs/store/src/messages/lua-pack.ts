/**
 * The accept call's one argument, packed as Redis's `cmsgpack.unpack` reads it: the layout is the
 * script's (`lua/message-accept-n.lua`, loaded by message-accept.ts beside this file), so its
 * packer lives here with it.
 */

/** What `packForLua` packs. */
export type LuaPackable = number | string | Buffer | readonly LuaPackable[];

/**
 * MessagePack as Redis's `cmsgpack.unpack` reads it: arrays, integers, doubles and strings — bytes
 * too, as strings (a Lua string holds any bytes, and Redis's cmsgpack knows no `bin` type).
 */
export function packForLua(value: LuaPackable): Buffer {
  at = 0;
  put(value);
  return Buffer.from(pool.subarray(0, at));
}

/** Where `packForLua` writes (grown as needed; its result is a copy), and how far it got. */
let pool = Buffer.allocUnsafe(64 * 1024);
let at = 0;

function room(bytes: number): void {
  if (at + bytes <= pool.length) return;
  const bigger = Buffer.allocUnsafe(Math.max(pool.length * 2, at + bytes));
  pool.copy(bigger, 0, 0, at);
  pool = bigger;
}

function put(v: LuaPackable): void {
  if (typeof v === 'string') {
    const n = Buffer.byteLength(v);
    stringHeader(n);
    room(n);
    at += pool.write(v, at, n, 'utf8');
  } else if (typeof v === 'number') putNumber(v);
  else if (Buffer.isBuffer(v)) {
    stringHeader(v.length);
    room(v.length);
    at += v.copy(pool, at);
  } else {
    const items = v as readonly LuaPackable[];
    const n = items.length;
    room(5);
    if (n < 16) pool[at++] = 0x90 | n;
    else if (n <= 0xffff) {
      pool[at++] = 0xdc;
      at = pool.writeUInt16BE(n, at);
    } else {
      pool[at++] = 0xdd;
      at = pool.writeUInt32BE(n, at);
    }
    for (let i = 0; i < n; i++) put(items[i]!);
  }
}

function stringHeader(n: number): void {
  room(5);
  if (n < 32) pool[at++] = 0xa0 | n;
  else if (n <= 0xff) {
    pool[at++] = 0xd9;
    pool[at++] = n;
  } else if (n <= 0xffff) {
    pool[at++] = 0xda;
    at = pool.writeUInt16BE(n, at);
  } else {
    pool[at++] = 0xdb;
    at = pool.writeUInt32BE(n, at);
  }
}

function putNumber(v: number): void {
  room(9);
  if (!Number.isInteger(v)) {
    pool[at++] = 0xcb;
    at = pool.writeDoubleBE(v, at);
  } else if (v >= 0) {
    if (v < 128) pool[at++] = v;
    else if (v <= 0xff) {
      pool[at++] = 0xcc;
      pool[at++] = v;
    } else if (v <= 0xffff) {
      pool[at++] = 0xcd;
      at = pool.writeUInt16BE(v, at);
    } else if (v <= 0xffffffff) {
      pool[at++] = 0xce;
      at = pool.writeUInt32BE(v, at);
    } else {
      pool[at++] = 0xcf;
      at = pool.writeBigUInt64BE(BigInt(v), at);
    }
  } else if (v >= -32) pool[at++] = v & 0xff;
  else if (v >= -128) {
    pool[at++] = 0xd0;
    at = pool.writeInt8(v, at);
  } else if (v >= -32768) {
    pool[at++] = 0xd1;
    at = pool.writeInt16BE(v, at);
  } else if (v >= -2147483648) {
    pool[at++] = 0xd2;
    at = pool.writeInt32BE(v, at);
  } else {
    pool[at++] = 0xd3;
    at = pool.writeBigInt64BE(BigInt(v), at);
  }
}
