import client from 'prom-client';

/**
 * The Cloud API engine's metrics (docs/cloud-api.md, docs/monitoring.md), part of `createMetrics`
 * (metrics.ts): the same prefix and registry, kept apart so the engine's rows read together.
 */
export function cloudMetrics(p: string, reg: client.Registry[]) {
  return {
    cloudWebhookDeliveries: new client.Counter({
      name: `${p}cloud_webhook_deliveries_total`,
      help: "Meta's webhook deliveries to the Cloud API endpoint, by outcome (ok, bad_signature, unknown_number, replay, stale, malformed).",
      labelNames: ['outcome'] as const,
      registers: reg,
    }),
    cloudWebhookEvents: new client.Counter({
      name: `${p}cloud_webhook_events_total`,
      help: 'Statuses and messages of signed Cloud API webhooks, by kind (status, message) and outcome (applied, unchanged, unknown_message, unsupported, no_phone, stale, unknown_number).',
      labelNames: ['kind', 'outcome'] as const,
      registers: reg,
    }),
  };
}
