import type { Metrics } from '@mgw/contracts';
import {
  USAGE_COUNTS,
  usageTotal,
  utcDay,
  type UsageDay,
  type WorkspaceStore,
  type WorkspaceUsage,
} from '@mgw/store';

/** The workspaces named in the gauge: the rest are summed as `_other`, so its labels stay bounded. */
export const WORKSPACE_METRICS_TOP = 20;
/** The label of the rest: no workspace id starts with `_` (WORKSPACE_ID_PATTERN). */
const OTHER = '_other';
/** Workspaces read at once. */
const AT_ONCE = 16;
/** A scrape reads Redis again at most this often (every scrape of every replica would otherwise). */
const REFRESH_MS = 60_000;

/**
 * `mgw_workspace_usage_today{workspace, count}` (docs/monitoring.md): today's usage of the
 * `WORKSPACE_METRICS_TOP` workspaces that accepted most, and of all others as `workspace="_other"`:
 * at most 21 × 8 series however many workspaces there are. Read from the usage counts (the same
 * numbers as GET …/usage), refreshed on a scrape at most once a minute.
 */
export class WorkspaceUsageGauge {
  private refreshedAt = 0;
  private running?: Promise<void>;

  constructor(
    private readonly deps: {
      usage: Pick<WorkspaceUsage, 'days'>;
      workspaces: Pick<WorkspaceStore, 'list'>;
      metrics: Pick<Metrics, 'workspaceUsageToday'>;
    },
  ) {}

  /** Before a scrape: refreshes the gauge when its figures are older than a minute. */
  collect(now = Date.now()): Promise<void> {
    if (now - this.refreshedAt < REFRESH_MS) return Promise.resolve();
    this.running ??= this.refresh(now).finally(() => (this.running = undefined));
    return this.running;
  }

  private async refresh(now: number): Promise<void> {
    const { day } = utcDay(now);
    const ids = (await this.deps.workspaces.list()).map((w) => w.id);
    const today: { id: string; usage: UsageDay }[] = [];
    for (let i = 0; i < ids.length; i += AT_ONCE)
      today.push(
        ...(await Promise.all(
          ids
            .slice(i, i + AT_ONCE)
            .map(async (id) => ({ id, usage: (await this.deps.usage.days(id, day, day))[0]! })),
        )),
      );
    today.sort((a, b) => b.usage.accepted - a.usage.accepted || a.id.localeCompare(b.id));
    const gauge = this.deps.metrics.workspaceUsageToday;
    gauge.reset();
    today.forEach(({ id, usage }, i) => {
      if (i < WORKSPACE_METRICS_TOP)
        for (const c of USAGE_COUNTS) gauge.set({ workspace: id, count: c }, usage[c]);
    });
    if (today.length > WORKSPACE_METRICS_TOP) {
      const other = usageTotal(today.slice(WORKSPACE_METRICS_TOP).map((t) => t.usage));
      for (const c of USAGE_COUNTS) gauge.set({ workspace: OTHER, count: c }, other[c]);
    }
    this.refreshedAt = now;
  }
}
