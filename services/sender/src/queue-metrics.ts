import type { Metrics } from '@mgw/contracts';
import type { DeviceFleet } from './device-fleet.js';

const STATES = ['waiting', 'active', 'delayed', 'failed', 'prioritized'] as const;

/** Refreshes the queue-depth and account-safety gauges of the devices this process owns. */
export function startQueueMetrics(owner: DeviceFleet, metrics: Metrics, everyMs = 5000): () => void {
  const tick = async () => {
    const totals: Record<string, number> = Object.fromEntries(STATES.map((s) => [s, 0]));
    // All devices at once (concurrent on one connection), not one awaited round trip after another.
    const all = await Promise.all(
      owner.runtimes().map(async (rt) => {
        const counts = await rt.counts().catch(() => undefined);
        await rt.refreshSafetyMetrics().catch(() => undefined);
        return counts;
      }),
    );
    for (const counts of all) for (const s of STATES) totals[s]! += counts?.[s] ?? 0;
    for (const s of STATES) metrics.queueJobs.set({ queue_type: 'send', state: s }, totals[s]!);
  };
  const timer = setInterval(() => void tick(), everyMs);
  timer.unref();
  void tick();
  return () => clearInterval(timer);
}
