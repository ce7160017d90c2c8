import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import { api, type ActivityAnswer, type ActivityHour, type ActivityStatus } from '../kit/api';
import { Banner, Spinner, usePoll } from '../kit/ui';

const POLL_MS = 10_000;

/** The chart's series, in the order a message reaches them; `cls` colours bar and legend alike. */
const SERIES: { key: ActivityStatus; label: string; cls: string }[] = [
  { key: 'sent', label: 'Sent', cls: 'series-sent' },
  { key: 'delivered', label: 'Delivered', cls: 'series-delivered' },
  { key: 'read', label: 'Read', cls: 'series-read' },
  { key: 'failed', label: 'Failed', cls: 'series-failed' },
];

// Drawn in CSS pixels, unscaled: the bars as wide as the scroller (at least MIN_W, then it scrolls
// sideways), the y-axis apart beside it, at the same height, so it never scrolls away.
const MIN_W = 720;
const H = 240;
const PAD = { top: 14, right: 10, bottom: 30, left: 6 };
const plotH = H - PAD.top - PAD.bottom;

/** A step of 1, 2 or 5 × 10^k so that about four grid lines cover `max` with whole numbers. */
function yScale(max: number): { top: number; step: number } {
  const rough = Math.max(max, 1) / 4;
  const p = 10 ** Math.floor(Math.log10(rough));
  const step = Math.max(1, [1, 2, 5, 10].map((m) => m * p).find((s) => s >= rough) ?? 10 * p);
  return { top: step * Math.max(1, Math.ceil(max / step)), step };
}

const clock = (iso: string) => new Date(iso).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
const hourLabel = (iso: string) => new Date(iso).toLocaleTimeString([], { hour: 'numeric' });

/** "14:00–15:00" in the viewer's time. */
function span(h: ActivityHour): string {
  return `${clock(h.hour)}–${clock(new Date(Date.parse(h.hour) + 3_600_000).toISOString())}`;
}

/** "14:00–15:00: 3 sent, 2 delivered, 1 read, 0 failed" — the tooltip of an hour. */
function describeHour(h: ActivityHour): string {
  return `${span(h)}: ${SERIES.map((s) => `${h[s.key]} ${s.key}`).join(', ')}`;
}

/**
 * The device's sending per hour as grouped bars (one group per hour, one bar per status), drawn
 * as plain SVG by the page. Statuses are not stacked: a read message was also sent and delivered,
 * so the bars of an hour overlap in meaning and are shown side by side. Every hour group carries
 * its counts as data attributes and a tooltip; every bar its status and count.
 */
export function ActivityChart(props: { hours: ActivityHour[]; width: number; top: number; step: number }) {
  const { hours, top, step } = props;
  const W = props.width;
  const plotW = W - PAD.left - PAD.right;
  const groupW = plotW / Math.max(hours.length, 1);
  const barW = (groupW * 0.78) / SERIES.length;
  const y = (n: number) => PAD.top + plotH - (n / top) * plotH;
  const ticks = Array.from({ length: Math.round(top / step) + 1 }, (_, i) => i * step);
  const labelEvery = hours.length > 12 ? 3 : 1;
  return (
    <svg
      class="activity-chart"
      width={W}
      height={H}
      viewBox={`0 0 ${W} ${H}`}
      role="img"
      aria-label={`Messages per hour over the last ${hours.length} hours`}
      data-testid="activity-chart"
    >
      {ticks.map((t) => (
        <g key={t} class="grid">
          <line x1={0} x2={W - PAD.right} y1={y(t)} y2={y(t)} />
        </g>
      ))}
      {hours.map((h, i) => {
        const x0 = PAD.left + i * groupW;
        return (
          <g
            key={h.hour}
            class="hour"
            data-testid="activity-hour"
            data-hour={h.hour}
            data-sent={h.sent}
            data-delivered={h.delivered}
            data-read={h.read}
            data-failed={h.failed}
          >
            <title>{describeHour(h)}</title>
            <rect class="hour-hit" x={x0} y={PAD.top} width={groupW} height={plotH} />
            {SERIES.filter((s) => h[s.key] > 0).map((s) => {
              const j = SERIES.indexOf(s);
              return (
                <rect
                  key={s.key}
                  class={`bar-${s.key} ${s.cls}`}
                  data-status={s.key}
                  data-count={h[s.key]}
                  x={x0 + groupW * 0.11 + j * barW}
                  y={y(h[s.key])}
                  width={Math.max(barW - 1, 1)}
                  height={Math.max(PAD.top + plotH - y(h[s.key]), 1)}
                  rx={1.5}
                >
                  <title>{`${span(h)}: ${h[s.key]} ${s.key}`}</title>
                </rect>
              );
            })}
            {(hours.length - 1 - i) % labelEvery === 0 && (
              <text class="hour-label" x={x0 + groupW / 2} y={H - 10} text-anchor="middle">
                {hourLabel(h.hour)}
              </text>
            )}
          </g>
        );
      })}
      <line class="axis" x1={0} x2={W - PAD.right} y1={y(0)} y2={y(0)} />
    </svg>
  );
}

/**
 * The chart's scale, drawn apart from the bars (outside their scroller, at their height): what the
 * bars count, written up the side, and the messages at each grid line — so a scrolled chart keeps
 * its scale.
 */
function YAxis(props: { top: number; step: number }) {
  const { top, step } = props;
  const y = (n: number) => PAD.top + plotH - (n / top) * plotH;
  const ticks = Array.from({ length: Math.round(top / step) + 1 }, (_, i) => i * step);
  // Room for the longest number (13 px digits, about 8 px each) and the tick marks.
  const axisW = 14 + 8 * String(top).length;
  return (
    <div class="chart-y" data-testid="activity-y-axis">
      <span class="chart-y-title" style={{ height: `${plotH}px`, marginTop: `${PAD.top}px` }}>
        Messages
      </span>
      <svg
        class="chart-y-axis"
        width={axisW}
        height={H}
        viewBox={`0 0 ${axisW} ${H}`}
        role="img"
        aria-label={`Scale: 0 to ${top} messages`}
      >
        {ticks.map((t) => (
          <g key={t} class="grid">
            <line x1={axisW - 4} x2={axisW} y1={y(t)} y2={y(t)} />
            <text data-testid="y-tick" x={axisW - 8} y={y(t)} text-anchor="end" dominant-baseline="middle">
              {t}
            </text>
          </g>
        ))}
        <line class="axis" x1={axisW - 0.5} x2={axisW - 0.5} y1={PAD.top} y2={y(0)} />
      </svg>
    </div>
  );
}

/**
 * The y-axis, then the bars in a scroller as wide as the card allows (at least MIN_W: narrower,
 * it scrolls sideways and opens on the latest hours); the drawing follows the scroller's width.
 */
function Chart(props: { hours: ActivityHour[] }) {
  const { hours } = props;
  const max = Math.max(0, ...hours.flatMap((h) => SERIES.map((s) => h[s.key])));
  const { top, step } = yScale(max);
  const scroller = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(MIN_W);
  useLayoutEffect(() => {
    const el = scroller.current;
    if (!el) return;
    const fit = () => setWidth(Math.max(MIN_W, Math.floor(el.clientWidth)));
    fit();
    const watch = new ResizeObserver(fit);
    watch.observe(el);
    return () => watch.disconnect();
  }, []);
  return (
    <div class="chart-frame">
      <YAxis top={top} step={step} />
      {/* Focusable: on a narrow screen it scrolls sideways, and a keyboard must reach it. */}
      <div
        class="chart-scroll"
        tabIndex={0}
        role="region"
        aria-label="Messages per hour chart"
        ref={scroller}
      >
        <ActivityChart hours={hours} width={width} top={top} step={step} />
      </div>
    </div>
  );
}

/**
 * The legend: each series' colour with its total over the hours shown — how many of the device's
 * messages (batches, single messages, OTPs) reached that status in those hours, so "Sent in 24 h"
 * counts a message that was read since. Worded apart from a batch's counts (batches-section.tsx),
 * which say where each of its messages is now.
 */
function Legend(props: { totals: Record<ActivityStatus, number>; hours: number }) {
  return (
    <ul
      class="chart-legend"
      data-testid="activity-totals"
      aria-label={`Totals of the last ${props.hours} hours: messages that reached each status`}
    >
      {SERIES.map((s) => (
        <li key={s.key} data-status={s.key} data-count={props.totals[s.key]}>
          <span class={`swatch ${s.cls}`} aria-hidden="true" />
          {s.label} in {props.hours} h <strong>{props.totals[s.key]}</strong>
        </li>
      ))}
    </ul>
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
  const busy = data ? data.hours.filter((h) => SERIES.some((s) => h[s.key] > 0)) : [];
  return (
    <section class="card" aria-labelledby="activity-title">
      <div class="card-head">
        <h2 id="activity-title">Last 24 hours</h2>
        {data && <Legend totals={data.totals} hours={data.hours.length} />}
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
