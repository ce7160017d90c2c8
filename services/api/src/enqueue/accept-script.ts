import type { RedisClient } from '@mgw/common';
import { keys } from '@mgw/contracts';
import { acceptScript, packForLua, type SendQueue, type StagedWrites } from '@mgw/store';

/*
 * The accept call of a group of requests of one device: each request's rate-limit hit counted, then
 * admitted or refused on what Redis holds at that instant, an admitted request's writes (recorded
 * here, `RecordedWrites`) and jobs run, all in one script of @mgw/store (`acceptScript`, its Lua in
 * `libs/store/lua/message-accept-n.lua`). This module packs the call and reads the reply.
 */

/** Why a request of the group was not admitted, or that it was. */
export const VERDICT = {
  admitted: 0,
  rateLimited: 1,
  noDevice: 2,
  quotaFull: 3,
  otherGeneration: 4,
  recipientBlocked: 5,
  /** An idempotent request found accepted before (its reply was lost): nothing written again. */
  acceptedBefore: 6,
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
 * Records the writes a store stages (`StagedWrites`) as op items of the accept script: they run
 * there, in order, only if their request is admitted.
 */
export class RecordedWrites implements StagedWrites {
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

/** One request of a call (or one piece of a long batch). */
export interface AcceptCallRequest {
  /** Its rate-limit counter, when its hit is to be counted. */
  counter?: string;
  /** What it adds to the device's quota counts. */
  messages: number;
  bytes: number;
  /** What the quota must have room for (a long batch's first piece: the whole batch); none: not checked. */
  check?: { messages: number; bytes: number };
  /** Its one recipient's address, to refuse it when the account's blocklist holds it; none: not checked. */
  blocklistCheck?: string;
  /**
   * An idempotent request's first message id: when the message index already holds it, the request
   * was accepted before (`VERDICT.acceptedBefore`) and nothing is written again.
   */
  acceptedIf?: string;
  writes: RecordedWrites;
}

/**
 * Runs the accept script (`acceptScript` of @mgw/store: its keys, packed argument and reply are in
 * `libs/store/lua/message-accept-n.lua`) for `requests` of one device, in one call, atomically.
 */
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
    keys.blocklist(deviceId),
    keys.contactIdentities(deviceId),
  ];
  const requests = call.requests.map((r) => {
    let counter = 0;
    if (r.counter !== undefined) {
      counter = scriptKeys.indexOf(r.counter) + 1;
      if (counter === 0) counter = scriptKeys.push(r.counter);
    }
    const check = r.check ?? { messages: -1, bytes: -1 };
    const address = r.blocklistCheck ?? '';
    return [
      counter,
      r.messages,
      r.bytes,
      check.messages,
      check.bytes,
      r.writes.items,
      address,
      r.acceptedIf ?? '',
    ] as const;
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
