/**
 * BullMQ queue names and options that producer and consumer must agree on.
 * BullMQ forbids ':' in queue names and job ids; device ids are slugs, so they are safe here.
 */
export const BULL_PREFIX = 'mgw:bull';

/** One send queue per device, so pacing and ownership are per account. */
export function sendQueueName(deviceId: string): string {
  return `send-${deviceId}`;
}

/** The connection service's request queue (connect / disconnect), answered through job results. */
export const CONNECTION_QUEUE = 'connection-requests';

/** BullMQ priorities: lower number = served first; OTP jobs jump the queue of a long list. */
export const PRIORITY = { otp: 1, send: 10 } as const;

/** Queue types, as used in metric labels (bounded: never a device id or job id). */
export const QUEUE_TYPES = ['send', 'connection'] as const;
export type QueueType = (typeof QUEUE_TYPES)[number];
