import { serializeError, type Logger, type RedisClient, type Subscription } from '@mgw/common';
import { startInvalidations } from './invalidations.js';
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
  private subscription?: Subscription;
  /** Bumped by every revocation heard: a lookup that overlapped one is not cached. */
  private revocations = 0;

  constructor(
    private readonly tokens: TokenStore,
    private readonly subscriber: RedisClient,
    private readonly logger: Logger,
    private readonly opts: { ttlMs: number; maxEntries: number } = { ttlMs: 30_000, maxEntries: 10_000 },
  ) {}

  /**
   * Resolves once Redis has confirmed the subscription, or after `START_WAIT_MS` without it: the
   * API serves without the cache meanwhile (the cache is used only while subscribed).
   */
  async start(): Promise<void> {
    // A lookup that overlapped an invalidation, or the subscription's loss or return, is not cached.
    this.subscription = await startInvalidations({
      subscriber: this.subscriber,
      channel: keys.tokensChannel(),
      drop: (hash) => {
        this.revocations++;
        this.entries.delete(hash);
      },
      dropAll: () => {
        this.revocations++;
        this.entries.clear();
      },
      logger: this.logger,
    });
  }

  private get subscribed(): boolean {
    return this.subscription?.subscribed ?? false;
  }

  /**
   * A verified token was used: its `lastUsedAt` is written in the background, at most once a
   * minute per token (TokenStore.noteUse: a Map lookup otherwise); a failed write is only logged.
   */
  noteUse(tokenHash: string): void {
    void this.tokens.noteUse(tokenHash, this.noteUseFailed);
  }

  /** One handler for every failed write: no closure made per request. */
  private readonly noteUseFailed = (err: unknown): void => {
    this.logger.warn('could not record when a token was last used', { err: serializeError(err) });
  };

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
