import { serializeError, type Logger, type RedisClient } from '@mgw/common';
import { keys } from '@mgw/contracts';
import { hashToken, isExpired, type TokenCheck, type TokenRecord, type TokenStore } from '@mgw/store';

interface Entry {
  token: TokenRecord;
  tokenHash: string;
  until: number;
}

/**
 * Verified tokens, remembered for a short while so a request does not pay a Redis round trip to
 * authenticate. A revocation is published on `keys.tokensChannel()` and drops the token here at
 * once; while this process is not subscribed (Redis away, reconnecting) the cache is not used at
 * all, so a revoked token never outlives its revocation by more than the publication's delivery.
 * Expiry is checked on every use. Only valid tokens are cached: a wrong token always goes to
 * Redis (and counts against its IP).
 */
export class TokenCache {
  private readonly entries = new Map<string, Entry>();
  private subscribed = false;
  /** Bumped by every revocation heard: a lookup that overlapped one is not cached. */
  private revocations = 0;

  constructor(
    private readonly tokens: TokenStore,
    private readonly subscriber: RedisClient,
    private readonly logger: Logger,
    private readonly opts: { ttlMs: number; maxEntries: number } = { ttlMs: 30_000, maxEntries: 10_000 },
  ) {}

  async start(): Promise<void> {
    this.subscriber.on('message', (channel: string, hash: string) => {
      if (channel !== keys.tokensChannel()) return;
      this.revocations++;
      this.entries.delete(hash);
    });
    // Invalidations sent while we were away are lost: forget everything, use no cache until subscribed.
    this.subscriber.on('close', () => {
      this.subscribed = false;
      this.revocations++;
      this.entries.clear();
    });
    this.subscriber.on('ready', () => void this.subscribe());
    await this.subscribe();
  }

  private async subscribe(): Promise<void> {
    try {
      await this.subscriber.subscribe(keys.tokensChannel());
      this.subscribed = true;
    } catch (err) {
      this.logger.warn('token revocations not subscribed; tokens are checked in Redis', {
        err: serializeError(err),
      });
    }
  }

  async verify(value: string, now = new Date()): Promise<TokenCheck> {
    const hash = hashToken(value);
    const hit = this.subscribed ? this.entries.get(hash) : undefined;
    if (hit && hit.until > now.getTime()) {
      if (isExpired(hit.token, now)) {
        this.entries.delete(hash);
        return { ok: false, reason: 'expired' };
      }
      return { ok: true, token: hit.token, tokenHash: hit.tokenHash };
    }
    const revocationsBefore = this.revocations;
    const check = await this.tokens.verify(value, now);
    // A revocation heard while Redis answered may be this very token: do not cache what it said.
    if (check.ok && this.subscribed && this.revocations === revocationsBefore) {
      if (this.entries.size >= this.opts.maxEntries) this.entries.delete(this.entries.keys().next().value!);
      this.entries.set(hash, {
        token: check.token,
        tokenHash: check.tokenHash,
        until: now.getTime() + this.opts.ttlMs,
      });
    } else this.entries.delete(hash);
    return check;
  }
}
