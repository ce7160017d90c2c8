import client from 'prom-client';
import { activeSpanIds, tracingWanted } from './tracing.js';

export type MetricsRegistry = client.Registry;

/**
 * Node's default metrics live in a registry of their own: several of prom-client's default gauges
 * end in `_total`, which `promtool check metrics` rejects, so they are served but not linted.
 */
export function createDefaultMetricsRegistry(): client.Registry {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry });
  return registry;
}

/**
 * One render at a time: an OpenMetrics render renames counters for its length (below), which a
 * Prometheus-text render running meanwhile must not see.
 */
let rendering: Promise<unknown> = Promise.resolve();
function oneAtATime<T>(render: () => Promise<T>): Promise<T> {
  const next = rendering.then(render, render);
  rendering = next.catch(() => undefined);
  return next;
}

/** The text served on /metrics: our registry first, then Node's defaults. */
export function renderMetrics(own: client.Registry, defaults?: client.Registry): Promise<string> {
  return oneAtATime(async () => {
    // A registry whose histograms keep exemplars is an OpenMetrics one (prom-client's rule): its
    // metrics are formatted as Prometheus text by a plain registry holding the same objects.
    const plain =
      own.contentType === client.Registry.PROMETHEUS_CONTENT_TYPE
        ? own
        : holding(new client.Registry(), [own]);
    const parts = [await plain.metrics()];
    if (defaults) parts.push(await defaults.metrics());
    return parts.join('\n');
  });
}

/** `target` with every metric of `registries` registered in it too (the same objects). */
function holding(target: client.Registry, registries: client.Registry[]): client.Registry {
  for (const r of registries) for (const m of r.getMetricsAsArray()) target.registerMetric(m as never);
  return target;
}

export const METRICS_CONTENT_TYPE = client.Registry.PROMETHEUS_CONTENT_TYPE;
export const OPENMETRICS_CONTENT_TYPE = client.Registry.OPENMETRICS_CONTENT_TYPE;

/**
 * True when the latency histograms carry exemplars (tracing on: docs/monitoring.md "Traces") and
 * the scraper asked for OpenMetrics, the only exposition that carries them (Prometheus asks for it
 * first by default; it stores the exemplars with `--enable-feature=exemplar-storage`).
 */
export function servesOpenMetrics(accept: string | undefined): boolean {
  return exemplarsOn && Boolean(accept?.includes('application/openmetrics-text'));
}

/**
 * Every metric of `own` and `defaults` in one OpenMetrics exposition, exemplars included.
 * prom-client formats OpenMetrics by registry, and renames a counter (drops its `_total`) while it
 * does: the names are put back after, and no other render runs meanwhile.
 */
export function renderOpenMetrics(own: client.Registry, defaults?: client.Registry): Promise<string> {
  return oneAtATime(async () => {
    const om = new client.Registry();
    om.setContentType(client.Registry.OPENMETRICS_CONTENT_TYPE as never);
    const metrics = [...own.getMetricsAsArray(), ...(defaults?.getMetricsAsArray() ?? [])] as {
      name: string;
    }[];
    const names = metrics.map((m) => m.name);
    holding(om, defaults ? [own, defaults] : [own]);
    try {
      return await om.metrics();
    } finally {
      metrics.forEach((m, i) => (m.name = names[i]!));
    }
  });
}

/** Read once: the histograms keep exemplars only when traces are exported (createMetrics). */
const exemplarsOn = tracingWanted();

/**
 * Observes `value`, with the active span's `trace_id` and `span_id` as the bucket's exemplar when
 * the histogram keeps exemplars (`createMetrics({ exemplars })`) and a span is active.
 */
export function observeTraced<T extends string>(
  histogram: client.Histogram<T>,
  labels: client.LabelValues<T>,
  value: number,
): void {
  if (!(histogram as unknown as { enableExemplars: boolean }).enableExemplars) {
    histogram.observe(labels, value);
    return;
  }
  const ids = activeSpanIds();
  histogram.observe({ labels, value, ...(ids ? { exemplarLabels: ids as never } : {}) });
}
