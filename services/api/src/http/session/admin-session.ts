import type { RedisClient } from '@mgw/common';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { keys } from '@mgw/contracts';
import { CONSOLE_ROLES, type ConsoleRole, type ConsoleUserStore } from '@mgw/store';

/**
 * Who a session is (docs/workspaces.md "The console"): the operator (ADMIN_PASSWORD), who may be
 * viewing one workspace as that workspace sees itself (`workspace`), or a console user of one
 * workspace (`user`, its `role`, and its record's `stamp` when it signed in).
 */
export type SessionWho =
  | { role: 'operator'; workspace?: string }
  | { role: ConsoleRole; workspace: string; user: string; stamp: string };

export type AdminSession = {
  /** Sent back by the dashboard in `X-CSRF-Token` on every state-changing call. */
  csrfToken: string;
  createdAt: string;
  expiresAt: string;
} & SessionWho;

const sha256 = (value: string) => createHash('sha256').update(value, 'utf8').digest('hex');

/** Constant-time equality of two strings of any length (their SHA-256 digests are compared). */
export function sameSecret(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given, 'utf8').digest();
  const b = createHash('sha256').update(expected, 'utf8').digest();
  return timingSafeEqual(a, b);
}

/**
 * Admin sessions in Redis. The cookie carries 32 random bytes; Redis holds only their SHA-256
 * (a Redis dump gives no usable session), with the session's CSRF token, who it is and an expiry.
 * A console user's sessions are listed under the user (ConsoleUserStore.noteSession), so that
 * deleting it, or changing its password or role, ends them all.
 */
export class AdminSessions {
  constructor(
    private readonly redis: RedisClient,
    private readonly ttlSeconds: number,
    private readonly users?: Pick<ConsoleUserStore, 'noteSession'>,
  ) {}

  async create(
    who: SessionWho = { role: 'operator' },
    now = new Date(),
  ): Promise<{ id: string; session: AdminSession }> {
    const id = randomBytes(32).toString('base64url');
    const session = {
      csrfToken: randomBytes(32).toString('base64url'),
      createdAt: now.toISOString(),
      expiresAt: new Date(now.getTime() + this.ttlSeconds * 1000).toISOString(),
      ...who,
    } as AdminSession;
    const hash = sha256(id);
    const key = keys.adminSession(hash);
    await this.redis
      .multi()
      .hset(key, { ...session })
      .expire(key, this.ttlSeconds)
      .exec();
    if ('user' in session) await this.users?.noteSession(session.user, hash, this.ttlSeconds);
    return { id, session };
  }

  async get(id: string): Promise<AdminSession | undefined> {
    if (id.length === 0 || id.length > 128) return undefined;
    const h = await this.redis.hgetall(keys.adminSession(sha256(id)));
    if (!h.csrfToken || !h.createdAt || !h.expiresAt) return undefined;
    const base = { csrfToken: h.csrfToken, createdAt: h.createdAt, expiresAt: h.expiresAt };
    // A session from before the console has no role: the operator's, as it was.
    if (!h.role || h.role === 'operator')
      return { ...base, role: 'operator', ...(h.workspace ? { workspace: h.workspace } : {}) };
    const role = CONSOLE_ROLES.find((r) => r === h.role);
    if (!role || !h.workspace || !h.user || !h.stamp) return undefined;
    return { ...base, role, workspace: h.workspace, user: h.user, stamp: h.stamp };
  }

  /**
   * An operator's session opens a workspace as that workspace sees itself (`workspace`), or
   * returns to the operator's view (undefined). Kept to the session's expiry: a session that ended
   * meanwhile is not brought back (what is left has no CSRF token, and goes at the same time).
   */
  async view(id: string, session: AdminSession, workspace: string | undefined): Promise<void> {
    const key = keys.adminSession(sha256(id));
    const tx = this.redis.multi();
    if (workspace) tx.hset(key, { workspace });
    else tx.hdel(key, 'workspace');
    await tx.expireat(key, Math.ceil(Date.parse(session.expiresAt) / 1000)).exec();
  }

  async delete(id: string): Promise<void> {
    await this.redis.del(keys.adminSession(sha256(id)));
  }
}
