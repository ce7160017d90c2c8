import { serializeError, type Logger, type RedisClient } from '@mgw/common';
import { keys } from '@mgw/contracts';
import { IntervalLock, processOwnerId, type EventLog } from '@mgw/store';

/** How often the retention window is enforced on every device's event log. */
export const EVENT_LOG_TRIM_INTERVAL_MS = 10 * 60_000;
/** Devices trimmed per round trip. */
const CHUNK = 500;

/**
 * Enforces the event log's retention window (`EVENT_LOG_RETENTION_HOURS`) on every device: every
 * ten minutes, one API process (whichever takes the interval's lock first, an `IntervalLock`: the
 * others skip their rounds while it lives, and a round that outlasts the interval keeps it) walks
 * the linked devices and the devices with a webhook (SSCAN, 500 at a time) and cuts each log's
 * entries older than the window (`XTRIM MINID ~`, whole stream nodes: O(nodes removed), nothing for a
 * device with none). The API runs it because the API reads the log (GET /events) and holds its
 * retention setting; the notifier walks webhook devices only, and a sender its own devices only.
 * A log of a device in neither set (unlinked, no webhook) is cut when it is read and kept short by
 * its count bound; GET /events never answers an expired event whatever the trim left.
 */
export class EventLogTrimmer {
  private timer?: NodeJS.Timeout;
  private running?: Promise<unknown>;
  private stopped = false;
  private readonly lock: IntervalLock;

  constructor(
    private readonly deps: { redis: RedisClient; eventLog: Pick<EventLog, 'trim'>; logger: Logger },
    private readonly intervalMs = EVENT_LOG_TRIM_INTERVAL_MS,
  ) {
    this.lock = new IntervalLock(deps.redis, {
      key: keys.eventLogTrimLock(),
      intervalMs,
      owner: processOwnerId('api'),
    });
  }

  start(): void {
    const tick = () => {
      if (this.stopped) return;
      this.running = this.round()
        .catch((err: unknown) => {
          this.deps.logger.warn('event log trim failed', { err: serializeError(err) });
        })
        .finally(() => {
          if (!this.stopped) this.timer = setTimeout(tick, this.intervalMs).unref();
        });
    };
    this.timer = setTimeout(tick, this.intervalMs).unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** One round: skipped when another API process holds this interval's lock. Returns the entries cut. */
  async round(): Promise<number> {
    return (await this.lock.run((lost) => this.trim(lost))) ?? 0;
  }

  /** Walks the devices and trims their logs, until done, stopped, or the lock is lost to another process. */
  private async trim(lost: AbortSignal): Promise<number> {
    const { redis, eventLog } = this.deps;
    let removed = 0;
    const done = new Set<string>();
    for (const set of [keys.linkedDevices(), keys.webhookDevices()]) {
      // Checked before each set too: a lock lost during the first set ends the round, not the set.
      if (this.stopped || lost.aborted) break;
      let cursor = '0';
      do {
        const [next, members] = await redis.sscan(set, cursor, 'COUNT', CHUNK);
        cursor = next;
        const fresh = members.filter((d) => !done.has(d));
        for (const d of fresh) done.add(d);
        if (fresh.length) removed += await eventLog.trim(fresh);
      } while (cursor !== '0' && !this.stopped && !lost.aborted);
    }
    return removed;
  }
}
