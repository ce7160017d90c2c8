import type { RedisClient } from '@mgw/common';
import { createHash } from 'node:crypto';
import type { Request } from 'express';
import { ApiError } from './api-error.js';
import { ERRORS, keys } from '@mgw/contracts';
import { storageContext, type Encryption } from '@mgw/store';

/** A response that is the result of work done (something was enqueued): it may be replayed. */
export interface Outcome {
  status: number;
  body: Record<string, unknown>;
}

interface Stored {
  fingerprint: string;
  state: 'in_progress' | 'done';
  status?: number;
  body?: Record<string, unknown>;
}

const KEY = /^[\x21-\x7e]{1,255}$/;

/**
 * `Idempotency-Key` per token: the first request with a key runs; a repeat with the same method,
 * path and body within the TTL gets the first outcome back (same status and body) and runs
 * nothing; the same key with another request is 422; a repeat while the first still runs is 409.
 * Only outcomes are kept: a request refused before it did anything (400, 409 no device, 503)
 * frees the key, so the client can retry it with the same key once the cause is fixed.
 *
 * The record is sealed (claim and outcome alike): a replayed /otp response holds the OTP code.
 */
export class Idempotency {
  constructor(
    private readonly redis: RedisClient,
    private readonly encryption: Encryption,
    private readonly ttlSeconds: number,
    /** How long a claim lives if its process dies mid-request. */
    private readonly inProgressTtlSeconds: number,
  ) {}

  async run(
    req: Request,
    tokenHash: string,
    work: () => Promise<Outcome>,
  ): Promise<Outcome & { replayed: boolean }> {
    const key = req.get('idempotency-key');
    if (key === undefined) return { ...(await work()), replayed: false };
    if (!KEY.test(key)) {
      throw ApiError.invalid([{ path: ['Idempotency-Key'], message: ERRORS.invalidIdempotencyKey }]);
    }
    const redisKey = keys.idempotency(tokenHash, key);
    const fingerprint = fingerprintOf(req);
    const seal = (stored: Stored) =>
      this.encryption.sealText(JSON.stringify(stored), storageContext(redisKey));
    const claim: Stored = { fingerprint, state: 'in_progress' };
    const claimed = await this.redis.set(redisKey, seal(claim), 'EX', this.inProgressTtlSeconds, 'NX');
    if (claimed !== 'OK') {
      const raw = await this.redis.get(redisKey);
      // Expired between SET NX and GET: treat as in flight rather than racing a second run.
      const stored = raw
        ? (JSON.parse(this.encryption.openText(raw, storageContext(redisKey))) as Stored)
        : { fingerprint, state: 'in_progress' as const };
      if (stored.fingerprint !== fingerprint) throw new ApiError(422, ERRORS.idempotencyConflict);
      if (stored.state === 'in_progress' || stored.status === undefined || !stored.body) {
        throw new ApiError(409, ERRORS.idempotencyInProgress);
      }
      return { status: stored.status, body: stored.body, replayed: true };
    }
    let outcome: Outcome;
    try {
      outcome = await work();
    } catch (err) {
      await this.redis.del(redisKey).catch(() => undefined);
      throw err;
    }
    const done: Stored = { fingerprint, state: 'done', ...outcome };
    await this.redis.set(redisKey, seal(done), 'EX', this.ttlSeconds);
    return { ...outcome, replayed: false };
  }
}

/** Method, path and a hash of the JSON body: the same key on another endpoint is a conflict. */
function fingerprintOf(req: Request): string {
  return createHash('sha256')
    .update(req.method)
    .update('\n')
    .update(req.path)
    .update('\n')
    .update(canonicalJson(req.body ?? null))
    .digest('hex');
}

/** JSON with sorted object keys, so `{a,b}` and `{b,a}` are the same request. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
