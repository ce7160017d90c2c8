import type { RequestHandler } from 'express';
import { rateLimit } from 'express-rate-limit';
import { RedisStore } from 'rate-limit-redis';
import { serializeError, type Logger, type RedisClient } from '@mgw/common';
import { rateLimitCommands } from '@mgw/store';
import { ApiError } from './api-error.js';
import { type ApiConfig } from '../config.js';
import { ERRORS, keys, type Metrics } from '@mgw/contracts';
import { authOf } from './auth.js';
import { CoalescingRedisStore } from './rate-limit-store.js';

/** Endpoints limited by express-rate-limit (`/send`'s hits are counted by its accept calls, see `SendRateLimit`). */
export type LimitedEndpoint = Exclude<keyof ApiConfig['rateLimits'], 'send'>;

/**
 * One limiter per endpoint, counted per API token (by the token's hash, never its value) in
 * Redis so every replica shares the counts (a token's hits of one turn are sent to Redis together,
 * see `CoalescingRedisStore`; `/send` has its own, `SendRateLimit`). X-RateLimit-Reset is express-rate-limit's legacy
 * header: the Unix time (seconds since the epoch, rounded up) at which the window ends.
 */
export function createRateLimiters(deps: {
  redis: RedisClient;
  config: Pick<ApiConfig, 'rateLimits' | 'rateLimitWindowMs'>;
  metrics: Metrics;
  logger: Logger;
}): Record<LimitedEndpoint, RequestHandler> {
  const { redis, config, metrics, logger } = deps;
  const limiterLogger = {
    warn: (err: unknown) => logger.warn('rate limiter warning', { err: serializeError(err) }),
    error: (err: unknown) => logger.error('rate limiter error', { err: serializeError(err) }),
  };
  const make = (endpoint: LimitedEndpoint): RequestHandler =>
    rateLimit({
      windowMs: config.rateLimitWindowMs,
      limit: config.rateLimits[endpoint],
      legacyHeaders: true,
      standardHeaders: false,
      keyGenerator: (_req, res) => authOf(res).tokenHash,
      store: new CoalescingRedisStore(
        new RedisStore({
          prefix: keys.rateLimitPrefix(endpoint),
          sendCommandCluster: rateLimitCommands(redis),
        }),
      ),
      // Storage down is a 503 like everywhere else, not a silently unlimited API.
      passOnStoreError: false,
      logger: limiterLogger,
      handler: (req, _res, next) => {
        metrics.rateLimitRejections.inc({ endpoint });
        const info = (req as { rateLimit?: { resetTime?: Date } }).rateLimit;
        const ms = info?.resetTime ? info.resetTime.getTime() - Date.now() : config.rateLimitWindowMs;
        next(
          new ApiError(429, ERRORS.rateLimited, undefined, { resetIn: Math.max(1, Math.ceil(ms / 1000)) }),
        );
      },
    });
  return {
    connect: make('connect'),
    disconnect: make('disconnect'),
    status: make('status'),
    otp: make('otp'),
    messages: make('messages'),
    webhook: make('webhook'),
    contacts: make('contacts'),
    groups: make('groups'),
    media: make('media'),
    account: make('account'),
    broadcasts: make('broadcasts'),
  };
}
