import type { Metrics } from '@mgw/contracts';
import type { DeviceFleet } from './device-fleet.js';

const STATES = ['waiting', 'active', 'delayed', 'failed', 'prioritized'] as const;

/** Refreshes the queue-depth gauge from the send queues of the devices this process owns. */
export function startQueueMetrics(owner: DeviceFleet, metrics: Metrics, everyMs = 5000): () => void {
  const tick = async () => {
    const totals: Record<string, number> = Object.fromEntries(STATES.map((s) => [s, 0]));
    for (const rt of owner.runtimes()) {
      const counts = await rt.counts().catch(() => undefined);
      for (const s of STATES) totals[s]! += counts?.[s] ?? 0;
    }
    for (const s of STATES) metrics.queueJobs.set({ queue_type: 'send', state: s }, totals[s]!);
  };
  const timer = setInterval(() => void tick(), everyMs);
  timer.unref();
  void tick();
  return () => clearInterval(timer);
}
