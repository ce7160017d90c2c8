import type { RedisClient } from '@mgw/common';
import { FAILURE_REASONS, keys } from '@mgw/contracts';
import type { WorkspaceStore } from './workspace-store.js';

/**
 * How many days a device's daily usage is kept after its last count: long enough to bill a month
 * late or read back a quarter (docs/workspaces.md "Usage").
 */
export const USAGE_RETENTION_DAYS = 100;
export const USAGE_TTL_SECONDS = USAGE_RETENTION_DAYS * 86_400;

/** The counts of a day's usage, in the order the CSV prints them. */
export const USAGE_COUNTS = [
  'accepted',
  'otp',
  'sent',
  'delivered',
  'read',
  'failed',
  'received',
  'mediaBytes',
] as const;
export type UsageCount = (typeof USAGE_COUNTS)[number];

/** Every reason a message can fail for (FAILURE_REASONS): the CSV's `failed:<reason>` columns. */
export const USAGE_FAILURE_REASONS: readonly string[] = Object.values(FAILURE_REASONS);

/** One UTC day of a workspace's (or a device's) usage. */
export type UsageDay = { day: string } & Record<UsageCount, number> & {
    /** The day's failures by reason (only the reasons that happened). */
    failedByReason: Record<string, number>;
  };

/** The longest range one read answers: what is kept. */
export const USAGE_MAX_DAYS = USAGE_RETENTION_DAYS;

const DAY_MS = 86_400_000;
/** Devices read at once (each device's days in one pipeline: one slot on a cluster). */
const DEVICES_AT_ONCE = 32;

/** The UTC days from `from` to `to` (YYYY-MM-DD, inclusive), oldest first. */
export function usageDays(from: string, to: string): string[] {
  const start = Date.parse(`${from}T00:00:00Z`);
  const end = Date.parse(`${to}T00:00:00Z`);
  const days: string[] = [];
  for (let t = start; t <= end; t += DAY_MS) days.push(new Date(t).toISOString().slice(0, 10));
  return days;
}

function emptyDay(day: string): UsageDay {
  const d = { day } as UsageDay;
  for (const c of USAGE_COUNTS) d[c] = 0;
  d.failedByReason = {};
  return d;
}

/** Adds one device's day hash (HGETALL) into a day's sums. */
function addInto(day: UsageDay, h: Record<string, string>): void {
  for (const [field, value] of Object.entries(h)) {
    const n = Math.max(0, Number(value) || 0);
    if (field.startsWith('failed:')) {
      const reason = field.slice('failed:'.length);
      day.failedByReason[reason] = (day.failedByReason[reason] ?? 0) + n;
    } else if ((USAGE_COUNTS as readonly string[]).includes(field)) day[field as UsageCount] += n;
  }
}

/**
 * What a workspace's devices did per UTC day (`keys.deviceDayUsage`): accepted, OTPs, sent,
 * delivered, read, failed (and by reason), received, media bytes. Nothing here writes: the scripts
 * that write the records count them in the same step (the accept call, the message transition,
 * the inbound record, the media store), so the sums are the records'. A workspace's usage is the
 * sum over the devices it owns now (a device stays with the workspace it was given to).
 */
export class WorkspaceUsage {
  constructor(
    private readonly redis: RedisClient,
    private readonly workspaces: Pick<WorkspaceStore, 'devices'>,
  ) {}

  /**
   * The devices whose usage is the workspace's: those it owns (WorkspaceStore.devices: for
   * `default` also every linked device no workspace names, linked before or after the start).
   */
  async devicesOf(workspaceId: string): Promise<string[]> {
    return this.workspaces.devices(workspaceId);
  }

  /** The workspace's usage per day from `from` to `to` (YYYY-MM-DD, inclusive), zero-filled. */
  async days(workspaceId: string, from: string, to: string): Promise<UsageDay[]> {
    return this.sum(await this.devicesOf(workspaceId), usageDays(from, to));
  }

  /** The sums of `deviceIds`' usage on each of `days`. */
  async sum(deviceIds: readonly string[], days: readonly string[]): Promise<UsageDay[]> {
    const out = days.map(emptyDay);
    for (let i = 0; i < deviceIds.length; i += DEVICES_AT_ONCE) {
      const replies = await Promise.all(
        deviceIds.slice(i, i + DEVICES_AT_ONCE).map((id) => this.deviceDays(id, days)),
      );
      for (const hashes of replies) hashes.forEach((h, d) => addInto(out[d]!, h));
    }
    return out;
  }

  /** One device's day hashes, in one pipeline (its keys share its slot). */
  private async deviceDays(deviceId: string, days: readonly string[]): Promise<Record<string, string>[]> {
    const read = this.redis.pipeline();
    for (const day of days) read.hgetall(keys.deviceDayUsage(deviceId, day));
    const results = (await read.exec()) ?? [];
    return results.map(([err, h]) => {
      if (err) throw err;
      return (h ?? {}) as Record<string, string>;
    });
  }
}

/** The sums of `days`' counts and reasons (a range's total, or several workspaces' day). */
export function usageTotal(days: readonly UsageDay[]): Omit<UsageDay, 'day'> {
  const { day: _, ...sum } = emptyDay('');
  for (const d of days) {
    for (const c of USAGE_COUNTS) sum[c] += d[c];
    for (const [reason, n] of Object.entries(d.failedByReason))
      sum.failedByReason[reason] = (sum.failedByReason[reason] ?? 0) + n;
  }
  return sum;
}

/** A day's usage as a CSV row's cells, after `workspace` and `day`: the counts, then every reason. */
export function usageCsvCells(d: UsageDay): number[] {
  return [...USAGE_COUNTS.map((c) => d[c]), ...USAGE_FAILURE_REASONS.map((r) => d.failedByReason[r] ?? 0)];
}

/** The CSV's header row. */
export const USAGE_CSV_HEADER = [
  'workspace',
  'day',
  ...USAGE_COUNTS,
  ...USAGE_FAILURE_REASONS.map((r) => `failed:${r}`),
];
