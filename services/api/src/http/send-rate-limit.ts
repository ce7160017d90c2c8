import { randomUUID } from 'node:crypto';
import type { ErrorRequestHandler, RequestHandler, Response } from 'express';
import type { ChainableCommander } from 'ioredis';
import { serializeError, type Logger, type RedisClient } from '@mgw/common';
import { ERRORS, keys, type Metrics } from '@mgw/contracts';
import { ApiError } from './api-error.js';
import { authOf } from './auth.js';

/**
 * Counts hits in fixed windows with rate-limit-redis's rule (a counter that has expired, or never
 * existed, starts a new window of `windowMs` at this hit). KEYS[1]: a key watched by the
 * transaction that follows; KEYS[2..]: counters. ARGV: windowMs, limit, then for each hit the
 * index in KEYS of its counter. Returns [total, ms left in the window] per hit. When a hit is over
 * the limit it touches KEYS[1] (set and deleted: nothing stays), so Redis discards the watching
 * transaction: the messages of a refused hit are never written.
 */
const COUNT_HITS = `
local windowMs = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local out = {}
local over = false
for i = 3, #ARGV do
  local key = KEYS[tonumber(ARGV[i])]
  local ttl = redis.call("PTTL", key)
  local total
  if ttl <= 0 then
    redis.call("SET", key, 1, "PX", windowMs)
    total = 1
    ttl = windowMs
  else
    total = redis.call("INCR", key)
  end
  if total > limit then over = true end
  out[#out + 1] = total
  out[#out + 1] = ttl
end
if over then
  redis.call("SET", KEYS[1], "1")
  redis.call("DEL", KEYS[1])
end
return out
`;

/** Redis's count of one hit. */
interface Counted {
  total: number;
  /** When the window ends (epoch ms, by this clock). */
  resetAt: number;
}

/**
 * One `/send` request's hit against its token's limit. The transaction that writes the request's
 * messages counts it (`stageHits`); a request that writes nothing (refused before, or replayed)
 * has it counted on its own when it is answered (`SendRateLimit.settle`).
 */
export class SendHit {
  counted?: Counted;
  /** Its headers are set (and its 429 thrown, if over): `SendRateLimit.settle` ran. */
  settled = false;

  /** The token's counter, in its device's slot. */
  readonly key: string;

  constructor(
    readonly deviceId: string,
    tokenHash: string,
    readonly limit: number,
    readonly windowMs: number,
  ) {
    this.key = keys.sendRateLimit(deviceId, tokenHash);
  }

  get over(): boolean {
    return this.counted !== undefined && this.counted.total > this.limit;
  }
}

/** What `stageHits` added to a pipeline, to be read back from its replies. */
export interface StagedHits {
  hits: SendHit[];
  /** Index of the counting script's reply in the pipeline's replies. */
  reply: number;
}

/**
 * Adds, ahead of a transaction (before its MULTI), the counting of `hits` (all of one device):
 * WATCH of a fresh gate key, then the counting script. One round trip with the transaction; if a
 * hit is over its limit, Redis discards the transaction (EXEC answers nil) — decided on Redis's
 * count, so no replica ever admits past the limit.
 */
export function stageHits(pipeline: ChainableCommander, deviceId: string, hits: SendHit[]): StagedHits {
  const gate = keys.acceptGate(deviceId, randomUUID());
  const counters: string[] = [];
  const index = hits.map((h) => {
    let i = counters.indexOf(h.key);
    if (i < 0) i = counters.push(h.key) - 1;
    return String(i + 2);
  });
  const { limit, windowMs } = hits[0]!;
  pipeline.watch(gate);
  // EVAL, not EVALSHA: never NOSCRIPT (a SCRIPT FLUSH or a promoted replica), which would let the
  // transaction run with its hits uncounted. Redis caches the script: ~700 bytes a transaction.
  pipeline.eval(COUNT_HITS, 1 + counters.length, gate, ...counters, windowMs, limit, ...index);
  const length = (pipeline as unknown as { length: number }).length;
  return { hits, reply: length - 1 };
}

/** Records Redis's counts of staged hits (a failed script leaves them uncounted: counted on their own later). */
export function readHits(staged: StagedHits, replies: [Error | null, unknown][]): void {
  const [err, reply] = replies[staged.reply] ?? [new Error('missing reply')];
  if (err || !Array.isArray(reply)) return;
  const now = Date.now();
  staged.hits.forEach((hit, i) => {
    hit.counted = { total: Number(reply[2 * i]), resetAt: now + Number(reply[2 * i + 1]) };
  });
}

/** The 429 of a hit over its limit. */
export function rateLimited(hit: SendHit): ApiError {
  const ms = hit.counted ? hit.counted.resetAt - Date.now() : hit.windowMs;
  return new ApiError(429, ERRORS.rateLimited, undefined, { resetIn: Math.max(1, Math.ceil(ms / 1000)) });
}

const HIT = Symbol('send hit');

/**
 * The `/send` rate limit, exact: a request's hit is counted in Redis by the transaction that
 * writes its messages (see `stageHits`), or on its own when it writes nothing, and it is refused
 * (429) on Redis's count — the same counts, fixed windows and headers as the other endpoints'
 * limiters (express-rate-limit with rate-limit-redis), but no round trip of its own for a request
 * that is accepted.
 */
export class SendRateLimit {
  constructor(
    private readonly deps: {
      redis: RedisClient;
      limit: number;
      windowMs: number;
      metrics: Metrics;
      logger: Logger;
    },
  ) {}

  /** Middleware (after authentication): gives the request its hit. */
  readonly start: RequestHandler = (_req, res, next) => {
    const auth = authOf(res);
    (res.locals as Record<symbol, SendHit>)[HIT] = new SendHit(
      auth.deviceId,
      auth.tokenHash,
      this.deps.limit,
      this.deps.windowMs,
    );
    next();
  };

  /** The request's hit (see `start`). */
  hitOf(res: Response): SendHit {
    const hit = (res.locals as Record<symbol, SendHit | undefined>)[HIT];
    if (!hit) throw new Error('SendRateLimit.start did not run');
    return hit;
  }

  /**
   * Before the answer: counts the hit if no transaction did, sets the rate-limit headers, and
   * throws the 429 if the hit is over the limit. For a request whose messages were `accepted`
   * (its transaction's count failed, which it survived) it never throws: the count is caught up.
   */
  async settle(res: Response, hit: SendHit, accepted = false): Promise<void> {
    if (hit.settled) return;
    if (!hit.counted) {
      try {
        const reply = (await this.deps.redis.eval(
          COUNT_HITS,
          2,
          keys.acceptGate(hit.deviceId, 'unwatched'),
          hit.key,
          hit.windowMs,
          hit.limit,
          '2',
        )) as number[];
        hit.counted = { total: Number(reply[0]), resetAt: Date.now() + Number(reply[1]) };
      } catch (err) {
        if (!accepted) throw err;
        this.deps.logger.warn('rate limiter: the hit of an accepted /send could not be counted', {
          err: serializeError(err),
        });
        return;
      }
    }
    hit.settled = true;
    const { total, resetAt } = hit.counted;
    res.setHeader('X-RateLimit-Limit', String(hit.limit));
    res.setHeader('X-RateLimit-Remaining', String(Math.max(0, hit.limit - total)));
    res.setHeader('X-RateLimit-Reset', String(Math.ceil(resetAt / 1000)));
    if (total > hit.limit && !accepted) {
      this.deps.metrics.rateLimitRejections.inc({ endpoint: 'send' });
      throw rateLimited(hit);
    }
  }

  /**
   * Error middleware after the route: a request that failed before its hit was counted (invalid
   * body, no device, quota, storage) is counted now, and over the limit its answer is the 429.
   */
  readonly settleErrors: ErrorRequestHandler = (err, _req, res, next) => {
    const hit = (res.locals as Record<symbol, SendHit | undefined>)[HIT];
    if (!hit || hit.settled || res.headersSent) return next(err);
    this.settle(res, hit).then(
      () => next(err),
      (limited: unknown) => next(limited instanceof ApiError ? limited : err),
    );
  };
}
