import { Job, QueueEvents, type Queue } from 'bullmq';
import {
  closeRedis,
  createRedis,
  serializeError,
  type Logger,
  type RedisClient,
  type RedisConfig,
} from '@mgw/common';
import { BULL_PREFIX } from '@mgw/contracts';

export type JobOutcome<R> =
  | { kind: 'completed'; value: R }
  | { kind: 'failed'; reason: string }
  /** The job was removed before it finished (e.g. a logout purged the device's queue). */
  | { kind: 'removed' }
  | { kind: 'timeout' };

interface Entry {
  ready: Promise<{ events: QueueEvents; connection: RedisClient }>;
  users: number;
  idleTimer?: NodeJS.Timeout;
}

/**
 * One QueueEvents (a blocking Redis connection of its own) per queue whose job results the API
 * waits for: opened on first use, closed after `idleMs` without users (a pod serving hundreds of
 * devices must not hold hundreds of idle connections), and all closed on shutdown.
 */
export class QueueEventsPool {
  private readonly pool = new Map<string, Entry>();

  constructor(
    private readonly redisTarget: RedisConfig,
    private readonly producer: RedisClient,
    private readonly logger: Logger,
    private readonly idleMs = 5 * 60_000,
  ) {}

  /** How many QueueEvents are open (or opening). */
  get size(): number {
    return this.pool.size;
  }

  /** Runs `fn` with the queue's QueueEvents listening; subscribe before adding the job. */
  async use<T>(queue: Queue, fn: (events: QueueEvents) => Promise<T>): Promise<T> {
    const entry = this.entry(queue);
    entry.users++;
    clearTimeout(entry.idleTimer);
    try {
      const { events } = await entry.ready;
      return await fn(events);
    } finally {
      entry.users--;
      if (entry.users === 0 && this.pool.get(queue.name) === entry) {
        entry.idleTimer = setTimeout(() => {
          if (entry.users > 0 || this.pool.get(queue.name) !== entry) return;
          this.pool.delete(queue.name);
          void closeEntry(entry);
        }, this.idleMs);
        entry.idleTimer.unref();
      }
    }
  }

  private entry(queue: Queue): Entry {
    let entry = this.pool.get(queue.name);
    if (!entry) {
      const created: Entry = { ready: this.open(queue), users: 0 };
      // A failed start is not kept: the next request tries again.
      created.ready.catch(() => {
        if (this.pool.get(queue.name) === created) this.pool.delete(queue.name);
      });
      this.pool.set(queue.name, created);
      entry = created;
    }
    return entry;
  }

  private async open(queue: Queue): Promise<{ events: QueueEvents; connection: RedisClient }> {
    // Start reading the event stream from its current end, fixed now: a QueueEvents started with
    // '$' only sees events after its first XREAD, and a job that finishes in between is missed.
    const last = await this.producer.xrevrange(queue.keys.events!, '+', '-', 'COUNT', 1);
    const connection = createRedis(this.redisTarget, 'worker', `api-events-${queue.name}`);
    const events = new QueueEvents(queue.name, {
      connection,
      prefix: BULL_PREFIX,
      lastEventId: last[0]?.[0] ?? '0-0',
    });
    events.on('error', (err) => this.logger.warn('queue events error', { err: serializeError(err) }));
    // Every wait on the device adds a 'removed' listener (`waitForJob`), taken off when it ends:
    // many waits at once are not a leak.
    events.setMaxListeners(0);
    return { events, connection };
  }

  async close(): Promise<void> {
    const entries = [...this.pool.values()];
    this.pool.clear();
    await Promise.all(entries.map(closeEntry));
  }
}

async function closeEntry(entry: Entry): Promise<void> {
  clearTimeout(entry.idleTimer);
  const e = await entry.ready.catch(() => undefined);
  if (!e) return;
  await e.events.close().catch(() => undefined);
  await closeRedis(e.connection);
}

const REMOVED = Symbol('removed');

/**
 * Waits up to `timeoutMs` for a job to finish, to be removed, or until `signal` aborts (the
 * caller knows then that nobody will answer, e.g. no worker is alive). After a wait that ended
 * without a result the job's state decides: failed (with the worker's reason), completed, or
 * still pending (timeout).
 */
export async function waitForJob<R>(
  queue: Queue,
  job: Job,
  events: QueueEvents,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<JobOutcome<R>> {
  let onRemoved: ((e: { jobId: string }) => void) | undefined;
  const removed = new Promise<typeof REMOVED>((resolve) => {
    onRemoved = ({ jobId }) => jobId === job.id && resolve(REMOVED);
    events.on('removed', onRemoved);
  });
  try {
    const finished = Promise.race([job.waitUntilFinished(events, timeoutMs) as Promise<R>, removed]);
    const value = signal ? await untilAborted(finished, signal) : await finished;
    if (value === REMOVED) return { kind: 'removed' };
    return { kind: 'completed', value: value as R };
  } catch {
    const fresh = await Job.fromId(queue, job.id!).catch(() => undefined);
    const state = await fresh?.getState().catch(() => 'unknown');
    if (fresh && state === 'failed') return { kind: 'failed', reason: fresh.failedReason || 'unknown error' };
    if (fresh && state === 'completed') return { kind: 'completed', value: fresh.returnvalue as R };
    return { kind: 'timeout' };
  } finally {
    if (onRemoved) events.off('removed', onRemoved);
  }
}

/** `p`, or a rejection as soon as `signal` aborts (`p` then settles unobserved). */
function untilAborted<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  p.catch(() => undefined);
  if (signal.aborted) return Promise.reject(new Error('aborted'));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new Error('aborted'));
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
