import { api, type ActivityAnswer, type ActivityHour, type ActivityStatus } from '../kit/api';
import { BarChart, busyGroups, Legend, type Series } from '../kit/chart';
import { Banner, Spinner, usePoll } from '../kit/ui';

const POLL_MS = 10_000;

/** The chart's series, in the order a message reaches them; `cls` colours bar and legend alike. */
const SERIES: Series<ActivityStatus>[] = [
  { key: 'sent', label: 'Sent', cls: 'series-sent' },
  { key: 'delivered', label: 'Delivered', cls: 'series-delivered' },
  { key: 'read', label: 'Read', cls: 'series-read' },
  { key: 'failed', label: 'Failed', cls: 'series-failed' },
];

const clock = (iso: string) => new Date(iso).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
const hourLabel = (iso: string) => new Date(iso).toLocaleTimeString([], { hour: 'numeric' });

/** "14:00–15:00" in the viewer's time: an hour's name in the chart's tooltips. */
function span(h: ActivityHour): string {
  return `${clock(h.hour)}–${clock(new Date(Date.parse(h.hour) + 3_600_000).toISOString())}`;
}

/**
 * The device's sending per hour as grouped bars (kit/chart.tsx: one group per hour, one bar per
 * status, side by side), the y-axis beside them. Every hour group carries its counts as data
 * attributes and a tooltip ("14:00–15:00: 3 sent, 2 delivered, 1 read, 0 failed"); every bar its
 * status and count.
 */
function Chart(props: { hours: ActivityHour[] }) {
  const { hours } = props;
  return (
    <BarChart
      groups={hours}
      series={SERIES}
      id={(h) => h.hour}
      name={span}
      label={(h) => hourLabel(h.hour)}
      data={(h) => ({
        'data-testid': 'activity-hour',
        'data-hour': h.hour,
        'data-sent': h.sent,
        'data-delivered': h.delivered,
        'data-read': h.read,
        'data-failed': h.failed,
      })}
      barClass={(s) => `bar-${s.key} ${s.cls}`}
      inset={0.11}
      svg={{
        class: 'activity-chart',
        testId: 'activity-chart',
        label: `Messages per hour over the last ${hours.length} hours`,
      }}
      region="Messages per hour chart"
      axisTestId="activity-y-axis"
    />
  );
}

/**
 * The legend: each series' colour with its total over the hours shown — how many of the device's
 * messages (batches, single messages, OTPs) reached that status in those hours, so "Sent in 24 h"
 * counts a message that was read since. Worded apart from a batch's counts (batches-section.tsx),
 * which say where each of its messages is now.
 */
function Totals(props: { totals: Record<ActivityStatus, number>; hours: number }) {
  return (
    <Legend
      series={SERIES}
      counts={props.totals}
      say={(s) => (
        <>
          {s.label} in {props.hours} h <strong>{props.totals[s.key]}</strong>
        </>
      )}
      testId="activity-totals"
      label={`Totals of the last ${props.hours} hours: messages that reached each status`}
    />
  );
}

/** The card of the Batches page with the last 24 hours of the device's sending, refreshed every 10 s. */
export function ActivitySection(props: { deviceId: string }) {
  const { deviceId } = props;
  const activity = usePoll(
    () => api<ActivityAnswer>(`/devices/${encodeURIComponent(deviceId)}/activity?hours=24`),
    POLL_MS,
    [deviceId],
  );
  const data = activity.data;
  const busy = data ? busyGroups(data.hours, SERIES) : [];
  return (
    <section class="card" aria-labelledby="activity-title">
      <div class="card-head">
        <h2 id="activity-title">Last 24 hours</h2>
        {data && <Totals totals={data.totals} hours={data.hours.length} />}
      </div>
      <p class="muted small">
        All messages of {deviceId} (batches, single messages and OTPs) per hour, in your time, counted once in
        each status they reached, in the hour it happened: a message sent at 9:50 and read at 10:05 is in the
        9:00 Sent bar and the 10:00 Delivered and Read bars.
      </p>
      {activity.error && <Banner kind="error">Could not load the activity: {activity.error}</Banner>}
      {!data ? (
        activity.loading && <Spinner label="Loading activity…" />
      ) : (
        <>
          <Chart hours={data.hours} />
          {busy.length === 0 ? (
            <p class="empty" data-testid="activity-empty">
              {deviceId} sent nothing in the last 24 hours.
            </p>
          ) : (
            <details class="chart-numbers">
              <summary>The numbers</summary>
              <table class="table">
                <thead>
                  <tr>
                    <th>Hour</th>
                    {SERIES.map((s) => (
                      <th key={s.key} class="num">
                        {s.label}
                      </th>
                    ))}
                  </tr>
                </thead>
                <tbody>
                  {busy.map((h) => (
                    <tr key={h.hour}>
                      <td>
                        {new Date(h.hour).toLocaleString([], { dateStyle: 'medium', timeStyle: 'short' })}
                      </td>
                      {SERIES.map((s) => (
                        <td key={s.key} class="num">
                          {h[s.key]}
                        </td>
                      ))}
                    </tr>
                  ))}
                </tbody>
              </table>
            </details>
          )}
        </>
      )}
    </section>
  );
}
