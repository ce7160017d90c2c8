import type { Metrics } from '@mgw/contracts';
import type { DeviceFleet } from './device-fleet.js';

const STATES = ['waiting', 'active', 'delayed', 'failed', 'prioritized'] as const;

/** The median of `values` (0 when there are none). */
export function median(values: readonly number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * Refreshes the queue-depth and account-safety gauges of the devices this process owns, and how
 * far behind its paced schedule the sender is: the median over the devices that had paced
 * messages in the window (one device waiting on a reconnect does not make a capacity problem;
 * a sender short of CPU makes them all late).
 */
export function startQueueMetrics(owner: DeviceFleet, metrics: Metrics, everyMs = 5000): () => void {
  const tick = async () => {
    const now = Date.now();
    const lags = owner
      .runtimes()
      .map((rt) => rt.takeScheduleLagMs(now))
      .filter((ms): ms is number => ms !== undefined);
    metrics.senderScheduleLag.set(median(lags) / 1000);
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
