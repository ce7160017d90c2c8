import type { RedisClient } from '@mgw/common';
import { keys } from '@mgw/contracts';
import { pipelineReplies } from '@mgw/common';

/** How long an hour's counters live after their last count: the chart shows 24 h, receipts come late. */
export const DEVICE_ACTIVITY_TTL_SECONDS = 48 * 3600;

/** The longest look back the counters can answer (they expire after 48 h). */
export const DEVICE_ACTIVITY_MAX_HOURS = 48;

/** The statuses counted per hour, in the order a message reaches them. */
export const ACTIVITY_STATUSES = ['sent', 'delivered', 'read', 'failed'] as const;

export type ActivityStatus = (typeof ACTIVITY_STATUSES)[number];

/** One UTC hour of a device's sending: how many of its messages reached each status in it. */
export type ActivityHour = { hour: string } & Record<ActivityStatus, number>;

const HOUR_MS = 3_600_000;

/**
 * A device's sending activity per hour (`keys.deviceActivity`). Nothing here writes: the message
 * transition script (message-scripts.ts) counts each status of each message once, in the same
 * atomic step that changes the record and announces its `message.<status>` event, so a receipt
 * that overtakes the sender's bookkeeping, a retry or a second sender never counts twice.
 */
export class DeviceActivity {
  constructor(private readonly redis: RedisClient) {}

  /**
   * The last `hours` UTC hours up to the current one, oldest first, zero-filled: each with its
   * start (ISO) and counts. One round trip (every key is the device's, so one slot on a cluster).
   */
  async lastHours(deviceId: string, hours: number, now = Date.now()): Promise<ActivityHour[]> {
    const current = Math.floor(now / HOUR_MS) * HOUR_MS;
    const starts = Array.from({ length: hours }, (_, i) => new Date(current - (hours - 1 - i) * HOUR_MS));
    const read = this.redis.pipeline();
    for (const start of starts)
      read.hmget(keys.deviceActivity(deviceId, start.toISOString()), ...ACTIVITY_STATUSES);
    const replies = pipelineReplies(await read.exec()) as (string | null)[][];
    return starts.map((start, i) => {
      const counts = replies[i] ?? [];
      const hour = { hour: start.toISOString() } as ActivityHour;
      ACTIVITY_STATUSES.forEach((s, j) => (hour[s] = Math.max(0, Number(counts[j] ?? 0))));
      return hour;
    });
  }
}
