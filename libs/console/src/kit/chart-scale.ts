/**
 * The bar chart's geometry and scale (kit/chart.tsx draws with them): plain numbers, no DOM, so
 * that the fast lane checks them (chart-scale.test.ts).
 */

// The drawing's size in CSS pixels: at least MIN_W wide (a narrower scroller scrolls), H high,
// the plot inside PAD (room for the hours' or days' labels below it).
export const MIN_W = 720;
export const H = 240;
export const PAD = { top: 14, right: 10, bottom: 30, left: 6 };
export const plotH = H - PAD.top - PAD.bottom;

/** The scale: the count at the top of the plot, and the step between its grid lines. */
export interface Scale {
  top: number;
  step: number;
}

/** A step of 1, 2 or 5 × 10^k so that about four grid lines cover `max` with whole numbers. */
export function yScale(max: number): Scale {
  const rough = Math.max(max, 1) / 4;
  const p = 10 ** Math.floor(Math.log10(rough));
  const step = Math.max(1, [1, 2, 5, 10].map((m) => m * p).find((s) => s >= rough) ?? 10 * p);
  return { top: step * Math.max(1, Math.ceil(max / step)), step };
}

/** Where a count stands on the plot (its y in the drawing), and the counts of the grid lines. */
export function plot({ top, step }: Scale) {
  return {
    y: (n: number) => PAD.top + plotH - (n / top) * plotH,
    ticks: Array.from({ length: Math.round(top / step) + 1 }, (_, i) => i * step),
  };
}
