import type { RedisClient } from '@mgw/common';
import { createHash, randomBytes } from 'node:crypto';
import type { Request } from 'express';
import { ApiError } from './api-error.js';
import { ERRORS, keys } from '@mgw/contracts';
import { storageContext, swapIdempotencyRecord, type Encryption } from '@mgw/store';

/** A response that is the result of work done (something was enqueued): it may be replayed. */
export interface Outcome {
  status: number;
  body: Record<string, unknown>;
}

/** What a run of the work knows of its key. */
export interface IdempotentRun {
  /**
   * The key's seed (keyed requests only): the ids the work makes from it (`seededMessageId`) are
   * the same in every run of the key, so a run after an outcome nobody could know writes nothing
   * twice (the accept script finds them: `VERDICT.acceptedBefore`).
   */
  seed?: string;
}

interface Stored {
  fingerprint: string;
  /**
   * `in_progress`: a run holds the key. `unknown`: the last run could not know whether its writes
   * landed (storage did not answer); the next request with the key runs again with the same seed.
   */
  state: 'in_progress' | 'unknown' | 'done';
  /** The ids' seed, kept for the key's life (claims written before it have none). */
  seed?: string;
  /** When the run that holds the key started (ms): past `staleAfterMs` its process is gone. */
  startedAt?: number;
  status?: number;
  body?: Record<string, unknown>;
}

/**
 * Thrown by work whose writes may or may not have landed (storage went silent after they were
 * sent): its answer says so, and the key is kept for a retry to finish it with the same ids.
 */
export class OutcomeUnknownError extends ApiError {
  constructor(ids: { messageId?: string; messageIds?: string[] }) {
    super(503, ERRORS.outcomeUnknown, undefined, { outcome: 'unknown', ...ids });
  }
}

const KEY = /^[\x21-\x7e]{1,255}$/;

/**
 * `Idempotency-Key` per token: the first request with a key runs; a repeat with the same method,
 * path and body within the TTL gets the first outcome back (same status and body) and runs
 * nothing; the same key with another request is 422; a repeat while the first still runs is 409.
 * Only outcomes are kept: a request refused before it did anything (400, 409 no device, 503)
 * frees the key, so the client can retry it with the same key once the cause is fixed.
 *
 * A run whose outcome is unknown (`OutcomeUnknownError`: its writes went out, no answer came back)
 * keeps the key marked `unknown`; so does a run whose process died (its claim older than
 * `staleAfterMs`). The next request with the key runs the work again with the same seed, so the
 * same ids: what landed is found and answered as accepted, what did not is written now — never
 * twice (docs/api.md, "When Redis is silent").
 *
 * The record is sealed (claim and outcome alike): a replayed /otp response holds the OTP code.
 */
export class Idempotency {
  constructor(
    private readonly redis: RedisClient,
    private readonly encryption: Encryption,
    private readonly ttlSeconds: number,
    /** How long a run may hold its key: past it, its process is taken for gone and the key for unknown. */
    private readonly staleAfterSeconds: number,
  ) {}

  async run(
    req: Request,
    tokenHash: string,
    work: (run: IdempotentRun) => Promise<Outcome>,
  ): Promise<Outcome & { replayed: boolean }> {
    const key = req.get('idempotency-key');
    if (key === undefined) return { ...(await work({})), replayed: false };
    if (!KEY.test(key)) {
      throw ApiError.invalid([{ path: ['Idempotency-Key'], message: ERRORS.invalidIdempotencyKey }]);
    }
    const redisKey = keys.idempotency(tokenHash, key);
    const fingerprint = fingerprintOf(req);
    const seal = (stored: Stored) =>
      this.encryption.sealText(JSON.stringify(stored), storageContext(redisKey));
    let claim: Stored = {
      fingerprint,
      state: 'in_progress',
      seed: randomBytes(16).toString('base64url'),
      startedAt: Date.now(),
    };
    // The claim lives as long as the outcome would: its seed must outlive any retry of the key.
    let sealed = seal(claim);
    const claimed = await this.redis.set(redisKey, sealed, 'EX', this.ttlSeconds, 'NX').catch((err) => {
      // Unanswered, the claim may still land: freed once storage answers, so no retry finds it
      // "in progress" for a run that never started.
      this.repair(() => this.free(redisKey, sealed));
      throw err;
    });
    if (claimed !== 'OK') {
      const raw = await this.redis.get(redisKey);
      // Expired between SET NX and GET: treat as in flight rather than racing a second run.
      const stored = raw
        ? (JSON.parse(this.encryption.openText(raw, storageContext(redisKey))) as Stored)
        : { fingerprint, state: 'in_progress' as const };
      if (stored.fingerprint !== fingerprint) throw new ApiError(422, ERRORS.idempotencyConflict);
      if (stored.state === 'done' && stored.status !== undefined && stored.body)
        return { status: stored.status, body: stored.body, replayed: true };
      const stale = Date.now() - (stored.startedAt ?? Date.now()) > this.staleAfterSeconds * 1000;
      if (!raw || !stored.seed || (stored.state === 'in_progress' && !stale))
        throw new ApiError(409, ERRORS.idempotencyInProgress);
      // Unknown, or left by a run that is gone: this request takes the key over, with its seed.
      claim = { ...stored, state: 'in_progress', startedAt: Date.now() };
      sealed = seal(claim);
      if (!(await swapIdempotencyRecord(this.redis, redisKey, raw, sealed, this.ttlSeconds)))
        throw new ApiError(409, ERRORS.idempotencyInProgress);
    }
    let outcome: Outcome;
    try {
      outcome = await work({ seed: claim.seed! });
    } catch (err) {
      if (err instanceof OutcomeUnknownError) {
        // Kept for the retry, marked unknown once storage answers (it is what failed).
        const unknown = seal({ ...claim, state: 'unknown' });
        this.repair(() => swapIdempotencyRecord(this.redis, redisKey, sealed, unknown, this.ttlSeconds));
      } else await this.free(redisKey, sealed).catch(() => this.repair(() => this.free(redisKey, sealed)));
      throw err;
    }
    const done: Stored = { fingerprint, state: 'done', ...outcome };
    await this.redis.set(redisKey, seal(done), 'EX', this.ttlSeconds);
    return { ...outcome, replayed: false };
  }

  /** Frees the key if it still holds `sealed` (this run's claim). */
  private async free(redisKey: string, sealed: string): Promise<void> {
    await swapIdempotencyRecord(this.redis, redisKey, sealed, '', 0);
  }

  private repairs = 0;

  /**
   * Writes what storage did not take (it failed or did not answer) once it answers again: tried
   * on a backoff for about a minute, then given up (the claim is taken over once stale anyway).
   */
  private repair(write: () => Promise<unknown>, attempt = 0): void {
    const delay = REPAIR_AFTER_MS[attempt];
    if (delay === undefined || (attempt === 0 && this.repairs >= REPAIRS_MAX)) return;
    if (attempt === 0) this.repairs++;
    setTimeout(() => {
      write().then(
        () => this.repairs--,
        () => {
          if (attempt + 1 < REPAIR_AFTER_MS.length) this.repair(write, attempt + 1);
          else this.repairs--;
        },
      );
    }, delay).unref();
  }
}

/** When a key's repair is tried again while storage does not answer (ms after the failure). */
const REPAIR_AFTER_MS = [0, 250, 500, 1000, 2000, 4000, 8000, 15_000, 30_000];
/** Repairs waiting at most (each holds a key and two sealed values). */
const REPAIRS_MAX = 10_000;
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
