import type { Metrics } from '@mgw/contracts';
import type { WebhookDeliveries, WebhookStore } from '@mgw/store';
import type { DeliveryDispatcher } from './dispatcher.js';

/**
 * The backlog gauge, read at scrape time: over every device with a webhook, events waiting for
 * their first attempt (in the outboxes) and for a retry (delayed); attempts in flight in this
 * process (active).
 */
export async function collectBacklog(
  webhooks: Pick<WebhookStore, 'devices'>,
  store: WebhookDeliveries,
  dispatcher: Pick<DeliveryDispatcher, 'inFlight'>,
  metrics: Metrics,
): Promise<void> {
  const { waiting, delayed } = await store.backlog(await webhooks.devices());
  metrics.webhookBacklog.set({ state: 'waiting' }, waiting);
  metrics.webhookBacklog.set({ state: 'delayed' }, delayed);
  metrics.webhookBacklog.set({ state: 'active' }, dispatcher.inFlight());
}
