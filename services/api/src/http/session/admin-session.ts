import type { RedisClient } from '@mgw/common';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { keys } from '@mgw/contracts';

export interface AdminSession {
  /** Sent back by the dashboard in `X-CSRF-Token` on every state-changing call. */
  csrfToken: string;
  createdAt: string;
  expiresAt: string;
}

const sha256 = (value: string) => createHash('sha256').update(value, 'utf8').digest('hex');

/** Constant-time equality of two strings of any length (their SHA-256 digests are compared). */
export function sameSecret(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given, 'utf8').digest();
  const b = createHash('sha256').update(expected, 'utf8').digest();
  return timingSafeEqual(a, b);
}

/**
 * Admin sessions in Redis. The cookie carries 32 random bytes; Redis holds only their SHA-256
 * (a Redis dump gives no usable session), with the session's CSRF token and an expiry.
 */
export class AdminSessions {
  constructor(
    private readonly redis: RedisClient,
    private readonly ttlSeconds: number,
  ) {}

  async create(now = new Date()): Promise<{ id: string; session: AdminSession }> {
    const id = randomBytes(32).toString('base64url');
    const session: AdminSession = {
      csrfToken: randomBytes(32).toString('base64url'),
      createdAt: now.toISOString(),
      expiresAt: new Date(now.getTime() + this.ttlSeconds * 1000).toISOString(),
    };
    const key = keys.adminSession(sha256(id));
    await this.redis
      .multi()
      .hset(key, { ...session })
      .expire(key, this.ttlSeconds)
      .exec();
    return { id, session };
  }

  async get(id: string): Promise<AdminSession | undefined> {
    if (id.length === 0 || id.length > 128) return undefined;
    const h = await this.redis.hgetall(keys.adminSession(sha256(id)));
    if (!h.csrfToken || !h.createdAt || !h.expiresAt) return undefined;
    return { csrfToken: h.csrfToken, createdAt: h.createdAt, expiresAt: h.expiresAt };
  }

  async delete(id: string): Promise<void> {
    await this.redis.del(keys.adminSession(sha256(id)));
  }
}
