/**
 * BullMQ queue names and options that producer and consumer must agree on.
 * BullMQ forbids ':' in queue names and job ids; device ids are slugs, so they are safe here.
 */
export const BULL_PREFIX = 'mgw:bull';

/**
 * How long a worker whose fetch failed on a lost connection waits before it fetches again.
 * BullMQ's 15 s means a worker sits idle for up to 15 s after Redis is back (a 10 s outage was
 * seen to resume sending 10.4 s after Redis returned). 2 s bounds that gap; while Redis is down a
 * retry is one command every 2 s per worker, held in ioredis's offline queue until it reconnects.
 */
export const WORKER_RUN_RETRY_DELAY_MS = 2_000;

/**
 * One send queue per device, so pacing and ownership are per account. The `{deviceId}` hash tag
 * puts the queue's keys in the device's Redis Cluster slot, beside its records (see `keys`).
 */
export function sendQueueName(deviceId: string): string {
  return `send-{${deviceId}}`;
}

/**
 * The connection service's request queue (connect / disconnect), answered through job results.
 * Its hash tag keeps all of the queue's keys in one Redis Cluster slot (BullMQ's scripts touch
 * several of them at once).
 */
export const CONNECTION_QUEUE = '{connection-requests}';

/**
 * Liveness of the connection service: each process refreshes its entry in
 * `keys.connectionWorkers()` every `beatMs`, valid for `ttlMs`. The API refuses (503) a /connect
 * or /disconnect when no entry is valid, and stops waiting for an answer when the last one lapses.
 */
export const CONNECTION_LIVENESS = { beatMs: 1000, ttlMs: 5000 } as const;

/** BullMQ priorities: lower number = served first; OTP jobs jump the queue of a long batch. */
export const PRIORITY = { otp: 1, send: 10 } as const;

/**
 * The per-device webhook delivery queue of notifiers before the delivery lease (hash tag as for
 * `sendQueueName`): read only to move what an upgrade finds there into the device's retries
 * (services/notifier/src/legacy-queues.ts).
 */
export function webhookQueueName(deviceId: string): string {
  return `webhook-{${deviceId}}`;
}

/**
 * Most events a device's outbox holds unread (oldest trimmed first): bounds what one tenant can
 * put in Redis while its notifier is away. At a few hundred bytes each, 100,000 are ~30 MB.
 */
export const OUTBOX_MAX_EVENTS = 100_000;

/**
 * Most events a device's event log (`keys.eventLog`, read by GET /events) keeps, oldest trimmed
 * first, whatever their age: bounds a busy device's log before its retention window ends it.
 * ~30 MB per device at most, as for the outbox.
 */
export const EVENT_LOG_MAX_EVENTS = 100_000;

/** How long the event log keeps an event by default (hours): `EVENT_LOG_RETENTION_HOURS`. */
export const EVENT_LOG_RETENTION_HOURS_DEFAULT = 24;
