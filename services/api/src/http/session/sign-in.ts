import { serializeError, type Logger, type RedisClient } from '@mgw/common';
import { keys } from '@mgw/contracts';
import {
  CONSOLE_USER_PATTERN,
  giveBackSignInAttempt,
  reserveSignInAttempt,
  type ConsoleUserStore,
  type TokenStore,
} from '@mgw/store';
import type { AdminConfig } from '../../config.js';
import { sameSecret, type AdminSession, type AdminSessions } from './admin-session.js';
import { KdfBusy, type PasswordHasher } from './password-hash.js';

export interface SignInDeps {
  redis: RedisClient;
  config: AdminConfig;
  sessions: AdminSessions;
  /** Admin tokens of the token CLI (`admin-create`): hashed in Redis, listed and revoked by id. */
  tokens: TokenStore;
  /** Where a failed `lastUsedAt` write of an admin token is logged. */
  logger: Logger;
  /** The console's users (docs/workspaces.md "The console") and their passwords' KDF. */
  users: Pick<ConsoleUserStore, 'get'>;
  passwords: Pick<PasswordHasher, 'verify'>;
}

/** An admin token was used: its `lastUsedAt`, throttled and in the background (TokenStore.noteUse). */
function noteAdminTokenUse(d: SignInDeps, tokenHash: string): void {
  void d.tokens.noteUse(tokenHash, (err) =>
    d.logger.warn('could not record when an admin token was last used', { err: serializeError(err) }),
  );
}

/** Automation: `ADMIN_API_TOKEN` (no `tokenId`), or an admin token of the CLI (`tokenId` names it). */
export interface TokenCaller {
  via: 'token';
  tokenId?: string;
}

/** The client spent its sign-in budget: it may try again in `resetIn` seconds. */
export interface TooManyAttempts {
  kind: 'refused';
  reason: 'too_many_attempts';
  resetIn: number;
}

const tooMany = (ttlMs: number): TooManyAttempts => ({
  kind: 'refused',
  reason: 'too_many_attempts',
  resetIn: Math.max(1, Math.ceil(ttlMs / 1000)),
});

/**
 * A sign-in with the password: one attempt of the client's budget is reserved first (refused
 * without the password being checked once the window's failures are spent, so guessing stops
 * there), compared in constant time, and given back when right. `client` is the client's IP key.
 */
export async function signIn(
  d: SignInDeps,
  client: string,
  password: string,
): Promise<
  | { kind: 'signed_in'; id: string; session: AdminSession }
  | TooManyAttempts
  | { kind: 'refused'; reason: 'disabled' | 'wrong_password' }
> {
  if (!d.config.password) return { kind: 'refused', reason: 'disabled' };
  const { blocked, ttlMs } = await reserveSignInAttempt(
    d.redis,
    client,
    d.config.signInWindowMs,
    d.config.signInLimit,
  );
  if (blocked) return tooMany(ttlMs);
  if (!sameSecret(password, d.config.password)) return { kind: 'refused', reason: 'wrong_password' };
  await giveBackSignInAttempt(d.redis, client);
  return { kind: 'signed_in', ...(await d.sessions.create()) };
}

/**
 * A console user's sign-in (docs/workspaces.md "The console"): one attempt of the client's budget
 * is reserved first, as the operator's password does (the same budget: guessing either stops at
 * the same limit), then the password is checked with the KDF — against the user's hash, or, for a
 * name nobody has, a fixed dummy hash at the same cost, so the answer's time does not tell which
 * names exist. A wrong name and a wrong password are one refusal. Past the KDF's gate the attempt
 * is given back (`busy`: nothing was checked). Right: the attempt is given back and a session of
 * the user's workspace and role is made, holding the record's stamp.
 */
export async function signInUser(
  d: SignInDeps,
  client: string,
  name: string,
  password: string,
): Promise<
  | { kind: 'signed_in'; id: string; session: AdminSession }
  | TooManyAttempts
  | { kind: 'refused'; reason: 'wrong_user_or_password' | 'busy' }
> {
  const { blocked, ttlMs } = await reserveSignInAttempt(
    d.redis,
    client,
    d.config.signInWindowMs,
    d.config.signInLimit,
  );
  if (blocked) return tooMany(ttlMs);
  const user = CONSOLE_USER_PATTERN.test(name) ? await d.users.get(name) : undefined;
  let right: boolean;
  try {
    right = await d.passwords.verify(password, user?.password);
  } catch (err) {
    if (!(err instanceof KdfBusy)) throw err;
    await giveBackSignInAttempt(d.redis, client);
    return { kind: 'refused', reason: 'busy' };
  }
  if (!user || !right) return { kind: 'refused', reason: 'wrong_user_or_password' };
  await giveBackSignInAttempt(d.redis, client);
  const who = { role: user.role, workspace: user.workspace, user: user.user, stamp: user.stamp };
  return { kind: 'signed_in', ...(await d.sessions.create(who)) };
}

/**
 * A bearer token: `ADMIN_API_TOKEN` or an admin token of the CLI. Wrong tokens count as failed
 * sign-ins of the client, so wrong tokens and wrong passwords share one limit and a client past
 * it is refused even with a right token. A right token costs no write: automation may call in
 * parallel without its own calls spending the budget (a token is 256 random bits, so the few
 * guesses that concurrency lets past the limit are worth nothing).
 */
export async function checkAdminToken(
  d: SignInDeps,
  client: string,
  token: string | undefined,
): Promise<
  { kind: 'admitted'; caller: TokenCaller } | TooManyAttempts | { kind: 'refused'; reason: 'wrong_token' }
> {
  const failKey = keys.adminSignInFailures(client);
  const [failures, ttlMs] = await Promise.all([d.redis.get(failKey), d.redis.pttl(failKey)]);
  if (Number(failures ?? 0) >= d.config.signInLimit && ttlMs > 0) return tooMany(ttlMs);
  let caller: TokenCaller | undefined;
  if (token && d.config.apiToken && sameSecret(token, d.config.apiToken)) caller = { via: 'token' };
  else if (token) {
    const check = await d.tokens.verify(token);
    if (check.ok) {
      caller = { via: 'token', tokenId: check.token.id };
      noteAdminTokenUse(d, check.tokenHash);
    }
  }
  if (caller) return { kind: 'admitted', caller };
  const reserved = await reserveSignInAttempt(d.redis, client, d.config.signInWindowMs, d.config.signInLimit);
  return reserved.blocked ? tooMany(reserved.ttlMs) : { kind: 'refused', reason: 'wrong_token' };
}
