import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import { ADMIN_BASE, api, type Usage, type UsageDay } from '../kit/api';
import { Banner, Spinner, usePoll } from '../kit/ui';
import '../batches/batches.css';
import './workspaces.css';

/** Usage is counted as it happens; a minute is fresh enough for a page of days. */
const POLL_MS = 60_000;

type Count = 'accepted' | 'sent' | 'delivered' | 'read' | 'failed';

/** The chart's series, in the order a message reaches them; `cls` colours bar and legend alike. */
export const USAGE_SERIES: { key: Count; label: string; cls: string }[] = [
  { key: 'accepted', label: 'Accepted', cls: 'series-accepted' },
  { key: 'sent', label: 'Sent', cls: 'series-sent' },
  { key: 'delivered', label: 'Delivered', cls: 'series-delivered' },
  { key: 'read', label: 'Read', cls: 'series-read' },
  { key: 'failed', label: 'Failed', cls: 'series-failed' },
];

// As the Batches page's chart (activity-chart.tsx): CSS pixels, the bars as wide as their
// scroller (at least MIN_W, then it scrolls sideways), the y-axis apart beside it.
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

/** "Mar 4": a UTC day as its date (the days are UTC days, whatever the viewer's zone). */
export function dayLabel(day: string): string {
  return new Date(`${day}T00:00:00Z`).toLocaleDateString('en', {
    month: 'short',
    day: 'numeric',
    timeZone: 'UTC',
  });
}

const describeDay = (d: UsageDay) =>
  `${dayLabel(d.day)}: ${USAGE_SERIES.map((s) => `${d[s.key]} ${s.key}`).join(', ')}`;

/** The days as grouped bars, one group a day, one bar a count (side by side: they overlap in meaning). */
function Bars(props: { days: UsageDay[]; width: number; top: number; step: number }) {
  const { days, top, step, width: W } = props;
  const groupW = (W - PAD.left - PAD.right) / Math.max(days.length, 1);
  const barW = (groupW * 0.8) / USAGE_SERIES.length;
  const y = (n: number) => PAD.top + plotH - (n / top) * plotH;
  const ticks = Array.from({ length: Math.round(top / step) + 1 }, (_, i) => i * step);
  const labelEvery = days.length > 12 ? 3 : 1;
  return (
    <svg
      class="activity-chart usage-chart"
      width={W}
      height={H}
      viewBox={`0 0 ${W} ${H}`}
      role="img"
      aria-label={`Messages per day from ${dayLabel(days[0]?.day ?? '')} to ${dayLabel(days.at(-1)?.day ?? '')}`}
      data-testid="usage-chart"
    >
      {ticks.map((t) => (
        <g key={t} class="grid">
          <line x1={0} x2={W - PAD.right} y1={y(t)} y2={y(t)} />
        </g>
      ))}
      {days.map((d, i) => {
        const x0 = PAD.left + i * groupW;
        return (
          <g key={d.day} class="hour" data-testid="usage-day" data-day={d.day} data-accepted={d.accepted}>
            <title>{describeDay(d)}</title>
            <rect class="hour-hit" x={x0} y={PAD.top} width={groupW} height={plotH} />
            {USAGE_SERIES.map((s, j) =>
              d[s.key] > 0 ? (
                <rect
                  key={s.key}
                  class={s.cls}
                  data-status={s.key}
                  data-count={d[s.key]}
                  x={x0 + groupW * 0.1 + j * barW}
                  y={y(d[s.key])}
                  width={Math.max(barW - 1, 1)}
                  height={Math.max(PAD.top + plotH - y(d[s.key]), 1)}
                  rx={1.5}
                >
                  <title>{`${dayLabel(d.day)}: ${d[s.key]} ${s.key}`}</title>
                </rect>
              ) : null,
            )}
            {(days.length - 1 - i) % labelEvery === 0 && (
              <text class="hour-label" x={x0 + groupW / 2} y={H - 10} text-anchor="middle">
                {dayLabel(d.day)}
              </text>
            )}
          </g>
        );
      })}
      <line class="axis" x1={0} x2={W - PAD.right} y1={y(0)} y2={y(0)} />
    </svg>
  );
}

/** The scale beside the bars, outside their scroller: a scrolled chart keeps it. */
function YAxis(props: { top: number; step: number }) {
  const { top, step } = props;
  const y = (n: number) => PAD.top + plotH - (n / top) * plotH;
  const ticks = Array.from({ length: Math.round(top / step) + 1 }, (_, i) => i * step);
  const axisW = 14 + 8 * String(top).length;
  return (
    <div class="chart-y">
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
            <text x={axisW - 8} y={y(t)} text-anchor="end" dominant-baseline="middle">
              {t}
            </text>
          </g>
        ))}
        <line class="axis" x1={axisW - 0.5} x2={axisW - 0.5} y1={PAD.top} y2={y(0)} />
      </svg>
    </div>
  );
}

function Chart(props: { days: UsageDay[] }) {
  const max = Math.max(0, ...props.days.flatMap((d) => USAGE_SERIES.map((s) => d[s.key])));
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
      {/* Focusable: on a narrow screen it scrolls sideways (opening on the latest days). */}
      <div class="chart-scroll" tabIndex={0} role="region" aria-label="Messages per day chart" ref={scroller}>
        <Bars days={props.days} width={width} top={top} step={step} />
      </div>
    </div>
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
  const busy = u ? u.days.filter((d) => USAGE_SERIES.some((s) => d[s.key] > 0)).reverse() : [];
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
        <ul class="chart-legend" data-testid="usage-totals" aria-label="Totals of the 30 days">
          {USAGE_SERIES.map((s) => (
            <li key={s.key} data-status={s.key} data-count={u.total[s.key]}>
              <span class={`swatch ${s.cls}`} aria-hidden="true" />
              {s.label} <strong>{u.total[s.key]}</strong>
            </li>
          ))}
        </ul>
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
