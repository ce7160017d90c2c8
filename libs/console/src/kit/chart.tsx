/**
 * The console's bar chart of message counts: the Batches page's activity per hour
 * (activity/activity-chart.tsx) and a workspace's usage per day (workspaces/usage-chart.tsx).
 *
 * One group of bars per hour or day, oldest first, and in a group one bar per series side by side
 * (the series are not stacked: a read message was also sent and delivered, so they overlap in
 * meaning). Drawn as plain SVG in CSS pixels, unscaled: the bars as wide as their scroller (at
 * least MIN_W, then it scrolls sideways and opens on the latest groups, chart.css), the y-axis
 * apart beside it, at the same height, so a scrolled chart keeps its scale.
 *
 * A chart brings its groups, its series and their colours, and what to call a group; this module
 * draws the scale, the axes, the bars and the legend's swatches.
 */
import type { ComponentChildren } from 'preact';
import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import { H, MIN_W, PAD, plot, plotH, yScale, type Scale } from './chart-scale';
import './chart.css';

/**
 * A series of a chart: the count it draws (`key`, a field of every group), its name, and the class
 * that colours its bars and its legend's swatch alike.
 */
export interface Series<K extends string> {
  key: K;
  label: string;
  cls: string;
}

/** What a chart says of its groups and itself; `G` is a group, with a count per series. */
export interface BarChartProps<K extends string, G extends Record<K, number>> {
  /** The groups, oldest first: one an hour, one a day. */
  groups: G[];
  /** The series, in the order their bars stand in a group. */
  series: readonly Series<K>[];
  /** A group's key among the others (its hour, its day). */
  id: (g: G) => string;
  /** A group's name in its tooltips: "14:00–15:00", "Mar 4" (then ": 3 sent, 2 delivered…"). */
  name: (g: G) => string;
  /** A group's label under its bars (for more than 12 groups, every third one, the latest first). */
  label: (g: G) => string;
  /** A group's data-testid and data-* attributes: its counts, for tests and readers. */
  data: (g: G) => Record<string, string | number>;
  /** A bar's class; its series' `cls` unless given. */
  barClass?: (s: Series<K>) => string;
  /** The share of a group's width left empty on each side of its bars: the gap between groups. */
  inset: number;
  /** The drawing's class, data-testid and aria-label ("Messages per hour over the last 24 hours"). */
  svg: { class: string; testId: string; label: string };
  /** The scroller's aria-label ("Messages per hour chart"). */
  region: string;
  /** The y-axis's data-testid, for a test to read the scale: each of its numbers is then a `y-tick`. */
  axisTestId?: string;
}

/**
 * A chart: the y-axis, then the bars in a scroller as wide as the card allows (at least MIN_W:
 * narrower, it scrolls sideways and opens on the latest groups); the drawing follows the
 * scroller's width. Every group carries its counts as data attributes and a tooltip; every bar
 * its series (`data-status`), its count and a tooltip.
 */
export function BarChart<K extends string, G extends Record<K, number>>(props: BarChartProps<K, G>) {
  const max = Math.max(0, ...props.groups.flatMap((g) => props.series.map((s) => g[s.key])));
  const scale = yScale(max);
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
      <YAxis scale={scale} testId={props.axisTestId} />
      {/* Focusable: on a narrow screen it scrolls sideways, and a keyboard must reach it. */}
      <div class="chart-scroll" tabIndex={0} role="region" aria-label={props.region} ref={scroller}>
        <Bars chart={props} width={width} scale={scale} />
      </div>
    </div>
  );
}

/** The bars of every group, their grid lines and the x-axis, drawn `width` pixels wide. */
function Bars<K extends string, G extends Record<K, number>>(props: {
  chart: BarChartProps<K, G>;
  width: number;
  scale: Scale;
}) {
  const { chart, width: W } = props;
  const { groups, series, inset } = chart;
  const { y, ticks } = plot(props.scale);
  const groupW = (W - PAD.left - PAD.right) / Math.max(groups.length, 1);
  const barW = (groupW * (1 - 2 * inset)) / series.length;
  const labelEvery = groups.length > 12 ? 3 : 1;
  return (
    <svg
      class={chart.svg.class}
      width={W}
      height={H}
      viewBox={`0 0 ${W} ${H}`}
      role="img"
      aria-label={chart.svg.label}
      data-testid={chart.svg.testId}
    >
      {ticks.map((t) => (
        <g key={t} class="grid">
          <line x1={0} x2={W - PAD.right} y1={y(t)} y2={y(t)} />
        </g>
      ))}
      {groups.map((g, i) => {
        const x0 = PAD.left + i * groupW;
        const name = chart.name(g);
        return (
          <g key={chart.id(g)} class="hour" {...chart.data(g)}>
            <title>{`${name}: ${series.map((s) => `${g[s.key]} ${s.key}`).join(', ')}`}</title>
            <rect class="hour-hit" x={x0} y={PAD.top} width={groupW} height={plotH} />
            {series.map((s, j) =>
              g[s.key] > 0 ? (
                <rect
                  key={s.key}
                  class={chart.barClass?.(s) ?? s.cls}
                  data-status={s.key}
                  data-count={g[s.key]}
                  x={x0 + groupW * inset + j * barW}
                  y={y(g[s.key])}
                  width={Math.max(barW - 1, 1)}
                  height={Math.max(PAD.top + plotH - y(g[s.key]), 1)}
                  rx={1.5}
                >
                  <title>{`${name}: ${g[s.key]} ${s.key}`}</title>
                </rect>
              ) : null,
            )}
            {(groups.length - 1 - i) % labelEvery === 0 && (
              <text class="hour-label" x={x0 + groupW / 2} y={H - 10} text-anchor="middle">
                {chart.label(g)}
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
function YAxis(props: { scale: Scale; testId: string | undefined }) {
  const { top } = props.scale;
  const { y, ticks } = plot(props.scale);
  // Room for the longest number (13 px digits, about 8 px each) and the tick marks.
  const axisW = 14 + 8 * String(top).length;
  return (
    <div class="chart-y" data-testid={props.testId}>
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
            <text
              data-testid={props.testId ? 'y-tick' : undefined}
              x={axisW - 8}
              y={y(t)}
              text-anchor="end"
              dominant-baseline="middle"
            >
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
 * A chart's legend: each series' swatch in its colour, then what the chart says of it (`say`: its
 * words and its count in a <strong>, "Sent in 24 h **3**"). Every item carries its series
 * (`data-status`) and its count; the list's data-testid and aria-label are the chart's.
 */
export function Legend<K extends string>(props: {
  series: readonly Series<K>[];
  counts: Record<K, number>;
  say: (s: Series<K>) => ComponentChildren;
  testId: string;
  label: string;
}) {
  return (
    <ul class="chart-legend" data-testid={props.testId} aria-label={props.label}>
      {props.series.map((s) => (
        <li key={s.key} data-status={s.key} data-count={props.counts[s.key]}>
          <span class={`swatch ${s.cls}`} aria-hidden="true" />
          {props.say(s)}
        </li>
      ))}
    </ul>
  );
}

/** The groups that counted anything in any series: those a chart's table of numbers lists. */
export function busyGroups<K extends string, G extends Record<K, number>>(
  groups: G[],
  series: readonly Series<K>[],
) {
  return groups.filter((g) => series.some((s) => g[s.key] > 0));
}
