import { RedisScript, type RedisClient } from '@mgw/common';
import { keys } from '@mgw/contracts';
import { INDEX_LUA, jobScriptSources, type SendQueue, type WriteBatch } from '@mgw/store';

/**
 * The Lua that accepts a group of requests of one device in one call, atomically: each request's
 * rate-limit hit is counted, then it is admitted or refused on what Redis holds at that instant
 * (the device takes messages, its link generation is the one the jobs carry, its queue quota has
 * room), and an admitted request's writes run: its content and list records (recorded by the
 * stores, see `RecordedWrites`) and its jobs, added by BullMQ's own job-adding scripts (their
 * source, wrapped as functions: `acceptScript`). Then the quota counts and the message index
 * take the admitted messages. Nothing runs between the checks and the writes, on any replica.
 *
 * KEYS: [1] session hash, [2] device quota hash, [3] message index, [4] message sequence,
 * [5..] rate-limit counters.
 * ARGV[1]: the call, packed with MessagePack (one argument: cheaper to send than hundreds) —
 * [[the link generation the jobs carry, quota messages, quota bytes, rate-limit window (ms), rate
 * limit, index retention (s)], [[BullMQ script name, its keys], …], [request, …]], a request being
 * [counter (index in KEYS, 0: no hit to count), the messages and bytes it adds to the quota counts,
 * the messages and bytes its quota check is for (-1: none), its op items]. An op: name, item
 * count, items — `JOB` (script name, message id, BullMQ's three arguments) or a Redis command and
 * its arguments.
 *
 * Returns: [accepts (1/0), link generation, queued messages, queued bytes] after the writes, then
 * per request: verdict (0 admitted, 1 over its rate limit, 2 no device, 3 quota full, 4 another
 * link generation), the hit's count and ms left in its window (-1, -1: not counted), the queued
 * messages and bytes it was judged against.
 */
const ACCEPT_LUA = `
local rcall = redis.call
local session, quota, indexKey, seqKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local call = cmsgpack.unpack(ARGV[1])
local head = call[1]
local expected, maxMessages, maxBytes = head[1], head[2], head[3]
local windowMs, limit, retention = head[4], head[5], head[6]
local jobKeys = {}
for _, set in ipairs(call[2]) do jobKeys[set[1]] = set[2] end

local s = rcall('HMGET', session, 'status', 'linkGeneration', 'linked')
local q = rcall('HMGET', quota, 'messages', 'bytes')
local accepts = s[1] == 'connected' or (s[1] == 'connecting' and s[3] == '1')
local generation = tonumber(s[2] or '0') or 0
local queued = math.max(0, tonumber(q[1] or '0') or 0)
local queuedBytes = math.max(0, tonumber(q[2] or '0') or 0)

local out = { 0, 0, 0, 0 }
local ids = {}
local addedMessages, addedBytes = 0, 0
for _, request in ipairs(call[3]) do
  local counter, messages, bytes = request[1], request[2], request[3]
  local checkMessages, checkBytes, items = request[4], request[5], request[6]
  local total, ttl = -1, -1
  if counter > 0 then
    local key = KEYS[counter]
    ttl = rcall('PTTL', key)
    if ttl <= 0 then
      rcall('SET', key, 1, 'PX', windowMs)
      total = 1
      ttl = windowMs
    else
      total = rcall('INCR', key)
    end
  end
  local verdict = 0
  if total > limit then verdict = 1
  elseif not accepts then verdict = 2
  elseif generation ~= expected then verdict = 4
  elseif checkMessages >= 0 and (queued + checkMessages > maxMessages or queuedBytes + checkBytes > maxBytes) then
    verdict = 3
  end
  out[#out + 1] = verdict
  out[#out + 1] = total
  out[#out + 1] = ttl
  out[#out + 1] = queued
  out[#out + 1] = queuedBytes
  if verdict == 0 then
    queued = queued + messages
    queuedBytes = queuedBytes + bytes
    addedMessages = addedMessages + messages
    addedBytes = addedBytes + bytes
    local i = 1
    while i <= #items do
      local name, n = items[i], items[i + 1]
      if name == 'JOB' then
        ids[#ids + 1] = items[i + 3]
        bull[items[i + 2]](jobKeys[items[i + 2]], { items[i + 4], items[i + 5], items[i + 6] })
      else
        rcall(name, unpack(items, i + 2, i + 1 + n))
      end
      i = i + 2 + n
    end
  end
end
if addedMessages > 0 then rcall('HINCRBY', quota, 'messages', addedMessages) end
if addedBytes > 0 then rcall('HINCRBY', quota, 'bytes', addedBytes) end
if #ids > 0 then mgw_index(indexKey, seqKey, retention, ids) end
out[1], out[2], out[3], out[4] = accepts and 1 or 0, generation, queued, queuedBytes
return out
`;

/**
 * The whole script: BullMQ's job-adding scripts as functions (`bull.addPrioritizedJob(KEYS, ARGV)`:
 * their own code, given the keys and arguments they take as a script), the message index's, then
 * ours. The shebang makes Redis refuse it whole when it is out of memory, before anything is written.
 */
function composeLua(sources: Readonly<Record<string, { lua: string }>>): string {
  const bull = Object.entries(sources)
    .map(([plain, { lua }]) => `bull[${JSON.stringify(plain)}] = function(KEYS, ARGV)\n${lua}\nend\n`)
    .join('');
  return `#!lua\nlocal bull = {}\n${bull}${INDEX_LUA}${ACCEPT_LUA}`;
}

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

let script: Promise<RedisScript<number[]>> | undefined;

/** The accept script of this process's BullMQ version, composed once. */
export function acceptScript(queue: SendQueue): Promise<RedisScript<number[]>> {
  if (!script) {
    script = jobScriptSources(queue).then(
      (sources) => new RedisScript<number[]>('mgwAccept', composeLua(sources)),
    );
    // A failure (Redis away at the first use) is not remembered.
    script.catch(() => (script = undefined));
  }
  return script;
}

/** Why a request of the group was not admitted, or that it was. */
export const VERDICT = {
  admitted: 0,
  rateLimited: 1,
  noDevice: 2,
  quotaFull: 3,
  otherGeneration: 4,
} as const;

/** One request's verdict, as the script returned it. */
export interface AcceptVerdict {
  verdict: (typeof VERDICT)[keyof typeof VERDICT];
  /** The hit's count and the ms left in its window, when the script counted it. */
  hit?: { total: number; ttlMs: number };
  /** What the device had queued when this request was judged. */
  queued: { messages: number; bytes: number };
}

export interface AcceptReply {
  /** The device's state after the call. */
  accepts: boolean;
  linkGeneration: number;
  queued: { messages: number; bytes: number };
  requests: AcceptVerdict[];
}

/**
 * Records the writes a store stages (`WriteBatch`) as op items of the accept script: they run
 * there, in order, only if their request is admitted.
 */
export class RecordedWrites implements WriteBatch {
  /** Op names and arguments (strings, bytes) and their item counts (numbers). */
  readonly items: (string | Buffer | number)[] = [];

  private op(name: string, args: (string | Buffer | number)[]): this {
    this.items.push(name, args.length);
    for (const a of args) this.items.push(typeof a === 'number' ? String(a) : a);
    return this;
  }

  hset(key: string, fields: Record<string, string | Buffer>): this {
    const args: (string | Buffer)[] = [key];
    for (const [field, value] of Object.entries(fields)) args.push(field, value);
    return this.op('HSET', args);
  }
  hsetnx(key: string, field: string, value: string): this {
    return this.op('HSETNX', [key, field, value]);
  }
  hincrby(key: string, field: string, increment: number): this {
    return this.op('HINCRBY', [key, field, increment]);
  }
  hdel(key: string, field: string): this {
    return this.op('HDEL', [key, field]);
  }
  expire(key: string, seconds: number): this {
    return this.op('EXPIRE', [key, seconds]);
  }
  zadd(key: string, ...args: (string | number)[]): this {
    return this.op('ZADD', [key, ...args]);
  }
  zremrangebyscore(key: string, min: string | number, max: string | number): this {
    return this.op('ZREMRANGEBYSCORE', [key, min, max]);
  }

  /** A job, added by BullMQ's script `plain` with its three arguments (after the queue's keys). */
  job(plain: string, messageId: string, argv: (string | Buffer)[]): this {
    this.items.push('JOB', 2 + argv.length, plain, messageId, ...argv);
    return this;
  }
}

/** One request of a call (or one piece of a long list). */
export interface AcceptCallRequest {
  /** Its rate-limit counter, when its hit is to be counted. */
  counter?: string;
  /** What it adds to the device's quota counts. */
  messages: number;
  bytes: number;
  /** What the quota must have room for (a long list's first piece: the whole list); none: not checked. */
  check?: { messages: number; bytes: number };
  writes: RecordedWrites;
}

/** Runs the accept script for `requests` of one device (see `ACCEPT_LUA`). */
export async function runAcceptScript(
  redis: RedisClient,
  queue: SendQueue,
  call: {
    deviceId: string;
    linkGeneration: number;
    quota: { maxQueuedMessages: number; maxQueuedBytes: number };
    rateLimit: { limit: number; windowMs: number };
    indexRetentionSeconds: number;
    /** BullMQ's keys by script name, for the scripts the jobs use. */
    jobKeys: ReadonlyMap<string, readonly string[]>;
    requests: readonly AcceptCallRequest[];
  },
): Promise<AcceptReply> {
  const { deviceId } = call;
  const scriptKeys = [
    keys.session(deviceId),
    keys.deviceQueue(deviceId),
    keys.messageIndex(deviceId),
    keys.messageSeq(deviceId),
  ];
  const requests = call.requests.map((r) => {
    let counter = 0;
    if (r.counter !== undefined) {
      counter = scriptKeys.indexOf(r.counter) + 1;
      if (counter === 0) counter = scriptKeys.push(r.counter);
    }
    const check = r.check ?? { messages: -1, bytes: -1 };
    return [counter, r.messages, r.bytes, check.messages, check.bytes, r.writes.items] as const;
  });
  const packed = packForLua([
    [
      call.linkGeneration,
      call.quota.maxQueuedMessages,
      call.quota.maxQueuedBytes,
      call.rateLimit.windowMs,
      call.rateLimit.limit,
      call.indexRetentionSeconds,
    ],
    [...call.jobKeys].map(([plain, list]) => [plain, list]),
    requests,
  ]);
  const reply = await (await acceptScript(queue)).run(redis, scriptKeys, [packed]);
  const n = (i: number) => Number(reply[i]);
  const verdicts: AcceptVerdict[] = call.requests.map((_, r) => {
    const at = 4 + r * 5;
    return {
      verdict: n(at) as AcceptVerdict['verdict'],
      ...(n(at + 1) >= 0 ? { hit: { total: n(at + 1), ttlMs: n(at + 2) } } : {}),
      queued: { messages: n(at + 3), bytes: n(at + 4) },
    };
  });
  return {
    accepts: n(0) === 1,
    linkGeneration: n(1),
    queued: { messages: n(2), bytes: n(3) },
    requests: verdicts,
  };
}
