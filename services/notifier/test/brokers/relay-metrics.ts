import { expect } from 'chai';
import type { createMetrics } from '@mgw/contracts';
import { waitFor } from '@mgw/testing';

type Metrics = ReturnType<typeof createMetrics>;

/** A relay metric's value for one transport (0 while it has none). */
export async function relayMetric(metrics: Metrics, name: string, transport: string): Promise<number> {
  const values = (await metrics.registry.getSingleMetric(name)?.get())?.values ?? [];
  return values.find((v) => v.labels.transport === transport)?.value ?? 0;
}

/**
 * Waits for a counter the relay moves once the broker confirmed (a consumer may see the message
 * before the confirm reaches the relay), then checks it is exactly `value`.
 */
export async function counterReaches(
  metrics: Metrics,
  name: string,
  transport: string,
  value: number,
): Promise<void> {
  await waitFor(async () => (await relayMetric(metrics, name, transport)) >= value, {
    timeoutMs: 10_000,
    what: `${name}{transport="${transport}"} at ${value}`,
  });
  expect(await relayMetric(metrics, name, transport)).to.equal(value);
}
