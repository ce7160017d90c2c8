import { createDefaultMetricsRegistry } from '@mgw/common';
import { createMetrics } from '@mgw/contracts';

type Registry = ReturnType<typeof createDefaultMetricsRegistry>;

/** Series Prometheus itself attaches to every scrape target; rules may use them. */
const SCRAPE_SERIES = ['up'];

async function seriesNames(registry: Registry): Promise<string[]> {
  const names: string[] = [];
  for (const metric of await registry.getMetricsAsJSON()) {
    names.push(metric.name);
    const type = String(metric.type);
    if (type === 'histogram')
      names.push(`${metric.name}_bucket`, `${metric.name}_sum`, `${metric.name}_count`);
    if (type === 'summary') names.push(`${metric.name}_sum`, `${metric.name}_count`);
  }
  return names;
}

/**
 * Every series name a service of ours can expose: the catalogue of `createMetrics()` plus the
 * default Node metrics of prom-client, with histograms expanded into `_bucket`, `_sum`, `_count`.
 */
export async function exportedSeriesNames(): Promise<Set<string>> {
  const own = await seriesNames(createMetrics().registry);
  const defaults = await seriesNames(createDefaultMetricsRegistry());
  return new Set([...own, ...defaults, ...SCRAPE_SERIES]);
}

const KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'by', 'without', 'on', 'ignoring', 'inf', 'nan']);

/**
 * The metric names a PromQL expression selects. Not a full parser, but enough for what dashboards
 * and rules contain: strings, label matchers, ranges, label lists, Grafana variables and numbers
 * are removed; an identifier followed by "(" is a function or aggregation, the rest are metrics.
 */
export function promqlMetricNames(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, ' ')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\boffset\s+-?\w+/g, ' ')
    .replace(/\$\{[^}]*\}|\$\w+/g, ' ')
    .replace(/(?<![\w:])[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?(?![\w:])/gi, ' ');
  const names = new Set<string>();
  for (const match of stripped.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)) {
    const name = match[0];
    const rest = stripped.slice((match.index ?? 0) + name.length);
    if (/^\s*\(/.test(rest)) continue;
    if (KEYWORDS.has(name.toLowerCase())) continue;
    names.add(name);
  }
  return [...names];
}
