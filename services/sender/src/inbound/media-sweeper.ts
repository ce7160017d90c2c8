import { serializeError, type Logger, type RedisClient } from '@mgw/common';
import { keys } from '@mgw/contracts';
import { IntervalLock, processOwnerId, type MediaStore } from '@mgw/store';

/**
 * The media retention for S3 (docs/media.md): every `intervalMs`, one sender of the fleet (the one
 * that takes the interval's lock, an `IntervalLock`; a sweep that outlasts the interval keeps it)
 * deletes the bucket's expired objects. Records and Redis objects expire by their TTL, so without
 * MEDIA_STORE nothing runs.
 */
export class MediaSweeper {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private readonly lock: IntervalLock;

  constructor(
    redis: RedisClient,
    private readonly media: MediaStore,
    private readonly intervalMs: number,
    private readonly logger: Logger,
  ) {
    this.lock = new IntervalLock(redis, {
      key: keys.mediaSweepLock(),
      intervalMs,
      owner: processOwnerId('sender'),
    });
  }

  start(): void {
    if (this.media.kind !== 's3' || this.timer) return;
    this.timer = setInterval(() => {
      this.running ??= this.sweepOnce().finally(() => (this.running = undefined));
    }, this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  private async sweepOnce(): Promise<void> {
    try {
      const swept = await this.lock.run(() => this.media.sweep());
      if (swept) this.logger.info('expired media deleted', { swept });
    } catch (err) {
      this.logger.warn('media retention sweep failed; the next one goes on', { err: serializeError(err) });
    }
  }
}
