import { ADMIN_BASE, api, type Usage, type UsageDay } from '../kit/api';
import { BarChart, busyGroups, Legend, type Series } from '../kit/chart';
import { Banner, Spinner, usePoll } from '../kit/ui';
// The card's head (.card-head), styled as the Batches page's cards'.
import '../batches/batches.css';
import './workspaces.css';

/** Usage is counted as it happens; a minute is fresh enough for a page of days. */
const POLL_MS = 60_000;

type Count = 'accepted' | 'sent' | 'delivered' | 'read' | 'failed';

/** The chart's series, in the order a message reaches them; `cls` colours bar and legend alike. */
export const USAGE_SERIES: Series<Count>[] = [
  { key: 'accepted', label: 'Accepted', cls: 'series-accepted' },
  { key: 'sent', label: 'Sent', cls: 'series-sent' },
  { key: 'delivered', label: 'Delivered', cls: 'series-delivered' },
  { key: 'read', label: 'Read', cls: 'series-read' },
  { key: 'failed', label: 'Failed', cls: 'series-failed' },
];

/** "Mar 4": a UTC day as its date (the days are UTC days, whatever the viewer's zone). */
export function dayLabel(day: string): string {
  return new Date(`${day}T00:00:00Z`).toLocaleDateString('en', {
    month: 'short',
    day: 'numeric',
    timeZone: 'UTC',
  });
}

/**
 * The days as grouped bars (kit/chart.tsx: one group a day, one bar a count, side by side: they
 * overlap in meaning), the y-axis beside them; a narrow screen scrolls them sideways, opening on
 * the latest days.
 */
function Chart(props: { days: UsageDay[] }) {
  const { days } = props;
  return (
    <BarChart
      groups={days}
      series={USAGE_SERIES}
      id={(d) => d.day}
      name={(d) => dayLabel(d.day)}
      label={(d) => dayLabel(d.day)}
      data={(d) => ({ 'data-testid': 'usage-day', 'data-day': d.day, 'data-accepted': d.accepted })}
      inset={0.1}
      svg={{
        class: 'activity-chart usage-chart',
        testId: 'usage-chart',
        label: `Messages per day from ${dayLabel(days[0]?.day ?? '')} to ${dayLabel(days.at(-1)?.day ?? '')}`,
      }}
      region="Messages per day chart"
    />
  );
}

/**
 * A workspace's usage of the last 30 UTC days (GET /workspaces/:id/usage): drawn as bars per day,
 * then the same numbers as a table (the days that had any, and the totals), and the CSV for
 * billing (the whole range, every count and failure reason).
 */
export function UsageSection(props: { workspaceId: string }) {
  const id = encodeURIComponent(props.workspaceId);
  const usage = usePoll(
    () => api<{ usage: Usage }>(`/workspaces/${id}/usage`).then((r) => r.usage),
    POLL_MS,
    [id],
  );
  const u = usage.data;
  const busy = u ? busyGroups(u.days, USAGE_SERIES).reverse() : [];
  return (
    <section class="card" aria-labelledby="usage-title" data-testid="usage">
      <div class="card-head">
        <h2 id="usage-title">Usage, last 30 days</h2>
        {u && (
          <a
            class="button-link secondary small-button"
            href={`${ADMIN_BASE}/workspaces/${id}/usage?from=${u.from}&to=${u.to}&format=csv`}
            download={`usage-${props.workspaceId}-${u.from}-${u.to}.csv`}
          >
            Download CSV
          </a>
        )}
      </div>
      {u && (
        <Legend
          series={USAGE_SERIES}
          counts={u.total}
          say={(s) => (
            <>
              {s.label} <strong>{u.total[s.key]}</strong>
            </>
          )}
          testId="usage-totals"
          label="Totals of the 30 days"
        />
      )}
      <p class="muted small">
        Every message of the workspace’s devices per UTC day, counted once in each status it reached, on the
        day it happened.
      </p>
      {usage.error && <Banner kind="error">Could not load the usage: {usage.error}</Banner>}
      {!u ? (
        usage.loading && <Spinner label="Loading usage…" />
      ) : (
        <>
          <Chart days={u.days} />
          {busy.length === 0 ? (
            <p class="empty" data-testid="usage-empty">
              Nothing was sent in these 30 days.
            </p>
          ) : (
            <div class="usage-numbers" tabIndex={0} role="region" aria-label="Usage per day, the numbers">
              <table class="table" data-testid="usage-table">
                <caption class="visually-hidden">Messages per UTC day, the days that had any</caption>
                <thead>
                  <tr>
                    <th scope="col">Day</th>
                    {USAGE_SERIES.map((s) => (
                      <th key={s.key} scope="col" class="num">
                        {s.label}
                      </th>
                    ))}
                  </tr>
                </thead>
                <tbody>
                  {busy.map((d) => (
                    <tr key={d.day} data-day={d.day}>
                      <th scope="row" class="day">
                        {dayLabel(d.day)}
                      </th>
                      {USAGE_SERIES.map((s) => (
                        <td key={s.key} class="num">
                          {d[s.key]}
                        </td>
                      ))}
                    </tr>
                  ))}
                </tbody>
                <tfoot>
                  <tr>
                    <th scope="row" class="day">
                      30 days
                    </th>
                    {USAGE_SERIES.map((s) => (
                      <td key={s.key} class="num strong">
                        {u.total[s.key]}
                      </td>
                    ))}
                  </tr>
                </tfoot>
              </table>
            </div>
          )}
        </>
      )}
    </section>
  );
}
