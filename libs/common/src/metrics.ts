import client from 'prom-client';

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

/** The text served on /metrics: our registry first, then Node's defaults. */
export async function renderMetrics(own: client.Registry, defaults?: client.Registry): Promise<string> {
  const parts = [await own.metrics()];
  if (defaults) parts.push(await defaults.metrics());
  return parts.join('\n');
}

export const METRICS_CONTENT_TYPE = client.Registry.PROMETHEUS_CONTENT_TYPE;
