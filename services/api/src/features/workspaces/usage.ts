/**
 * A workspace's usage per UTC day (docs/workspaces.md "Usage"), as JSON or as CSV for billing:
 * GET /api/messenger/v1/workspace/usage (its workspace token) and
 * GET /api/admin/v1/workspaces/{id}/usage (the operator). The counts are kept by the scripts that
 * write the records (usage.ts of @mgw/store); this module reads and formats (the query's rules
 * are bodies.ts's).
 */
import { USAGE_CSV_HEADER, usageCsvCells, usageTotal, type UsageDay, type WorkspaceUsage } from '@mgw/store';

/** What the JSON answer holds: the range, each day, and the range's sums. */
export interface UsageView {
  workspaceId: string;
  from: string;
  to: string;
  days: UsageDay[];
  total: Omit<UsageDay, 'day'>;
}

/** Reads a workspace's usage over the query's range. */
export async function readUsage(
  usage: Pick<WorkspaceUsage, 'days'>,
  workspaceId: string,
  range: { from: string; to: string },
): Promise<UsageView> {
  const days = await usage.days(workspaceId, range.from, range.to);
  return { workspaceId, from: range.from, to: range.to, days, total: usageTotal(days) };
}

/** The usage as CSV (RFC 4180): a header, then one row per day; every cell is a slug or a number. */
export function usageCsv(view: UsageView): string {
  const rows = [USAGE_CSV_HEADER.join(',')];
  for (const d of view.days) rows.push([view.workspaceId, d.day, ...usageCsvCells(d)].join(','));
  return `${rows.join('\r\n')}\r\n`;
}
