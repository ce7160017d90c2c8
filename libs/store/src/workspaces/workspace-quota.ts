import type { RedisClient } from '@mgw/common';
import { keys } from '@mgw/contracts';
import { storeScript } from '../lua.js';

const RESERVE_DAY = storeScript<[number, number]>('workspace-day-reserve-1');

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
 * day (a count of its own, reserved before the accept call), what its devices hold queued and the
 * media bytes they keep (sums over its devices, read when a request arrives).
 */
export class WorkspaceQuotaCounts {
  constructor(private readonly redis: RedisClient) {}

  /**
   * Reserves `messages` in the day's count unless that would pass `limit`: the count after, or
   * `{ refused }` with the count as it was (nothing reserved).
   */
  async reserveDay(
    workspaceId: string,
    messages: number,
    limit: number,
    now = Date.now(),
  ): Promise<{ reserved: true; day: string; count: number } | { reserved: false; count: number }> {
    const { day } = utcDay(now);
    const [ok, count] = await RESERVE_DAY.run(
      this.redis,
      [keys.workspaceDayCount(workspaceId, day)],
      [String(messages), String(limit), String(DAY_COUNT_TTL_SECONDS)],
    );
    return ok === 1 ? { reserved: true, day, count } : { reserved: false, count };
  }

  /** Gives back what a reservation of `day` did not use (the accept call refused it). */
  async giveBackDay(workspaceId: string, day: string, messages: number): Promise<void> {
    if (messages > 0) await this.redis.decrby(keys.workspaceDayCount(workspaceId, day), messages);
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
