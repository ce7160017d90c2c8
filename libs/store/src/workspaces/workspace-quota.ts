import type { RedisClient } from '@mgw/common';
import { keys } from '@mgw/contracts';
import { storeScript } from '../lua.js';

const RESERVE_DAY = storeScript<[number, number]>('workspace-day-reserve-1');
const GIVE_BACK_DAY = storeScript<number>('workspace-day-give-back-1');

/** A day's reservation count outlives its day by one (a late give-back still finds it). */
const DAY_COUNT_TTL_SECONDS = 2 * 86_400;

/** The UTC day of `now` (YYYY-MM-DD), and when it ends (ISO): the daily quota's reset. */
export function utcDay(now = Date.now()): { day: string; resetsAt: string } {
  const start = Math.floor(now / 86_400_000) * 86_400_000;
  return {
    day: new Date(start).toISOString().slice(0, 10),
    resetsAt: new Date(start + 86_400_000).toISOString(),
  };
}

/**
 * The counts a workspace's quotas are judged on (docs/workspaces.md "Quotas"): its messages of the
 * day (a count of its own, reserved before the accept call, which starts from what its devices
 * accepted that day: their day usage, always counted), what its devices hold queued and the media
 * bytes they keep (sums over its devices, read when a request arrives).
 */
export class WorkspaceQuotaCounts {
  constructor(private readonly redis: RedisClient) {}

  /**
   * Reserves `messages` in the day's count unless that would pass `limit`: the count after, or
   * `{ refused }` with the count as it was (nothing reserved). A day without a count yet (the
   * quota's first request of the day, or the first since the quota was set) starts it from what
   * `deviceIds()` accepted that day, so a quota set in the middle of a day counts the messages
   * accepted before it: one more round trip then, none on the other requests.
   */
  async reserveDay(
    workspaceId: string,
    messages: number,
    limit: number,
    deviceIds: () => Promise<readonly string[]>,
    now = Date.now(),
  ): Promise<{ reserved: true; day: string; count: number } | { reserved: false; count: number }> {
    const { day } = utcDay(now);
    const key = [keys.workspaceDayCount(workspaceId, day)];
    const args = [String(messages), String(limit), String(DAY_COUNT_TTL_SECONDS)];
    let [ok, count] = await RESERVE_DAY.run(this.redis, key, args);
    if (ok === -1) {
      const accepted = await this.acceptedOn(await deviceIds(), day);
      [ok, count] = await RESERVE_DAY.run(this.redis, key, [...args, String(accepted)]);
    }
    return ok === 1 ? { reserved: true, day, count } : { reserved: false, count };
  }

  /** Gives back what a reservation of `day` did not use (the accept call refused it). */
  async giveBackDay(workspaceId: string, day: string, messages: number): Promise<void> {
    if (messages > 0)
      await GIVE_BACK_DAY.run(this.redis, [keys.workspaceDayCount(workspaceId, day)], [String(messages)]);
  }

  /** The messages `deviceIds` accepted on `day` (YYYY-MM-DD): their day usage's `accepted`. */
  async acceptedOn(deviceIds: readonly string[], day: string): Promise<number> {
    const counts = await Promise.all(
      deviceIds.map((id) => this.redis.hget(keys.deviceDayUsage(id, day), 'accepted')),
    );
    return counts.reduce((sum, c) => sum + Math.max(0, Number(c ?? 0) || 0), 0);
  }

  /** The messages `deviceIds` hold accepted and not yet ended (their queue counts). */
  async queued(deviceIds: readonly string[]): Promise<number> {
    const counts = await Promise.all(
      deviceIds.map((id) => this.redis.hget(keys.deviceQueue(id), 'messages')),
    );
    return counts.reduce((sum, c) => sum + Math.max(0, Number(c ?? 0) || 0), 0);
  }

  /** The media bytes `deviceIds` keep stored (their media quotas' totals). */
  async mediaBytes(deviceIds: readonly string[]): Promise<number> {
    const totals = await Promise.all(deviceIds.map((id) => this.redis.hget(keys.mediaSizes(id), '_total')));
    return totals.reduce((sum, t) => sum + Math.max(0, Number(t ?? 0) || 0), 0);
  }
}
