import type { RedisClient } from '@mgw/common';
import { keys } from '@mgw/contracts';
import { storeScript } from '../lua.js';

/**
 * Failed authentications counted per client IP (its `ipKeyGenerator` key), each in a fixed window
 * that starts at its first failure, so guessing stops at a limit: wrong API tokens
 * (`recordAuthFailure`), and admin sign-ins — wrong passwords and wrong admin tokens share one
 * budget (`reserveSignInAttempt`, `giveBackSignInAttempt`).
 */

const RECORD_FAILURE = storeScript<[number, number, number]>('auth-failure-record-1');
const RESERVE_ATTEMPT = storeScript<[number, number]>('auth-sign-in-reserve-1');
const GIVE_BACK = storeScript<null>('auth-sign-in-give-back-1');

/** A window's failures of one client IP. */
export interface AuthFailures {
  failures: number;
  /** What is left of the window (ms). */
  ttlMs: number;
  /** The IP is at the limit: this failure was not counted. */
  blocked: boolean;
}

/**
 * Counts one wrong API token of the client IP (see `lua/auth-failure-record-1.lua`); an IP already
 * at `limit` is not counted further and is `blocked` until its window ends.
 */
export async function recordAuthFailure(
  redis: RedisClient,
  client: string,
  windowMs: number,
  limit: number,
): Promise<AuthFailures> {
  const [failures, ttlMs, blocked] = await RECORD_FAILURE.run(
    redis,
    [keys.rateLimitPrefix('auth-failures') + client],
    [String(windowMs), String(limit)],
  );
  return { failures, ttlMs, blocked: blocked === 1 };
}

/**
 * Reserves one admin sign-in attempt of the client IP (see `lua/auth-sign-in-reserve-1.lua`):
 * `blocked` once `limit` attempts are counted in the window, so parallel guesses cannot outrun the
 * count. A successful sign-in gives its attempt back (`giveBackSignInAttempt`).
 */
export async function reserveSignInAttempt(
  redis: RedisClient,
  client: string,
  windowMs: number,
  limit: number,
): Promise<{ blocked: boolean; ttlMs: number }> {
  const [blocked, ttlMs] = await RESERVE_ATTEMPT.run(
    redis,
    [keys.adminSignInFailures(client)],
    [String(windowMs), String(limit)],
  );
  return { blocked: blocked === 1, ttlMs };
}

/** A successful sign-in's attempt goes back to the client IP's budget, while its window lasts. */
export async function giveBackSignInAttempt(redis: RedisClient, client: string): Promise<void> {
  await GIVE_BACK.run(redis, [keys.adminSignInFailures(client)]);
}
