import { serializeError, type Logger, type RedisClient } from '@mgw/common';
import { CONNECTION_LIVENESS, keys } from '@mgw/contracts';
import { LivenessSet } from '@mgw/store';

/**
 * This process's entry in the connection service's liveness set (see CONNECTION_LIVENESS; one
 * `LivenessSet` of @mgw/store, scored on the Redis clock, so hosts with skewed clocks still agree),
 * and the check whether another process (by its lease owner id) is still alive: a pairing record
 * or a running disconnect whose process died is stale at once, not only when its lease runs out.
 */
export class Liveness {
  private timer: NodeJS.Timeout | undefined;
  private beating: Promise<void> | undefined;
  /** performance.now() when the last beat that Redis took was sent; undefined when not announced. */
  private beatSentAt: number | undefined;
  private stopped = false;
  private readonly set: LivenessSet;

  constructor(
    redis: RedisClient,
    readonly owner: string,
    private readonly logger: Logger,
    private readonly beatMs: number = CONNECTION_LIVENESS.beatMs,
    private readonly ttlMs: number = CONNECTION_LIVENESS.ttlMs,
  ) {
    // Each beat forgets every expired entry: nobody takes over from a connection service.
    this.set = new LivenessSet(redis, { key: keys.connectionWorkers(), ttlMs, forgetMs: 1 });
  }

  /** Announces this process now and every beat until `stop`. */
  async start(): Promise<void> {
    await this.beat();
    this.timer = setInterval(() => {
      // A slow Redis must not stack beats.
      if (this.beating) return;
      this.beating = this.beat()
        .catch((err: unknown) => {
          this.logger.warn('liveness not announced', { err: serializeError(err) });
        })
        .finally(() => (this.beating = undefined));
    }, this.beatMs);
  }

  /** Withdraws this process at once, so the API stops sending it work. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    this.stopped = true;
    this.beatSentAt = undefined;
    await this.set.leave(this.owner).catch(() => undefined);
  }

  /**
   * Whether this process counts as alive in the set now, by its own clock: started, not stopped,
   * and its last accepted beat is younger than the TTL (the entry expires later than that).
   */
  announced(): boolean {
    return this.beatSentAt !== undefined && performance.now() - this.beatSentAt < this.ttlMs;
  }

  async isAlive(owner: string): Promise<boolean> {
    return this.set.isAlive(owner);
  }

  private async beat(): Promise<void> {
    const sentAt = performance.now();
    await this.set.beat(this.owner);
    // A beat that lands after stop() announces nothing.
    if (!this.stopped) this.beatSentAt = sentAt;
  }
}
