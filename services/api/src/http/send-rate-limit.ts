import type { ErrorRequestHandler, RequestHandler, Response } from 'express';
import { isRedisUnavailableError, serializeError, type Logger, type RedisClient } from '@mgw/common';
import { ERRORS, keys, type Metrics } from '@mgw/contracts';
import { countRateLimitHit } from '@mgw/store';
import { ApiError } from './api-error.js';
import { authOf } from './auth.js';

/** Redis's count of one hit. */
interface Counted {
  total: number;
  /** When the window ends (epoch ms, by this clock). */
  resetAt: number;
}

/**
 * One `/send` request's hit against its token's limit. The accept script that writes the request's
 * messages counts it; a request that writes nothing (refused before, or replayed) has it counted on
 * its own when it is answered (`SendRateLimit.settle`).
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
}

/** The 429 of a hit over its limit. */
export function rateLimited(hit: SendHit): ApiError {
  const ms = hit.counted ? hit.counted.resetAt - Date.now() : hit.windowMs;
  return new ApiError(429, ERRORS.rateLimited, undefined, { resetIn: Math.max(1, Math.ceil(ms / 1000)) });
}

const HIT = Symbol('send hit');

/**
 * The `/send` rate limit, exact: a request's hit is counted in Redis by the accept script that
 * writes its messages (atomically with them), or on its own when it writes nothing, and it is refused
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
   * Before the answer: counts the hit if no accept call did, sets the rate-limit headers, and
   * throws the 429 if the hit is over the limit. For a request whose messages were `accepted`
   * it never throws: its call counted it (should one not have, the count is caught up here).
   */
  async settle(res: Response, hit: SendHit, accepted = false): Promise<void> {
    if (hit.settled) return;
    if (!hit.counted) {
      try {
        const { total, ttlMs } = await countRateLimitHit(this.deps.redis, hit.key, hit.windowMs);
        hit.counted = { total, resetAt: Date.now() + ttlMs };
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
    // Storage failed (down, or silent): counting would wait on it too, and fail the same way.
    if (isRedisUnavailableError(err) || (err instanceof ApiError && err.status === 503)) return next(err);
    this.settle(res, hit).then(
      () => next(err),
      (limited: unknown) => next(limited instanceof ApiError ? limited : err),
    );
  };
}
