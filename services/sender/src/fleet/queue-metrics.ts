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
 * Every `everyMs`: how far behind its paced schedule the sender is (the median over the devices
 * that had paced messages in the window: one device waiting on a reconnect does not make a
 * capacity problem; a sender short of CPU makes them all late), and the account-safety gauges
 * of the devices whose pause or health signals changed. Every `devicesEveryMs`: every device's
 * safety gauges and the queue-depth totals — ~10 Redis reads a device, which a sender holding
 * thousands of idle devices must not repeat every few seconds (issue 55: at 5 s, with the health
 * window read whole, they were half the commands an idle account cost Redis). 15 s is as often as
 * Prometheus scrapes by default.
 */
export function startQueueMetrics(
  owner: DeviceFleet,
  metrics: Metrics,
  everyMs = 5000,
  devicesEveryMs = 15_000,
): () => void {
  let running = false;
  let countedAt = 0;
  const tick = async () => {
    // A tick still running (a slow Redis) is not stacked on.
    if (running) return;
    running = true;
    try {
      const now = Date.now();
      const lags = owner
        .runtimes()
        .map((rt) => rt.takeScheduleLagMs(now))
        .filter((ms): ms is number => ms !== undefined);
      metrics.senderScheduleLag.set(median(lags) / 1000);
      // All devices at once (concurrent on one connection), not one awaited round trip after another.
      await Promise.all(
        owner.runtimes().map((rt) => rt.refreshSafetyMetrics(devicesEveryMs).catch(() => undefined)),
      );
      if (now - countedAt < devicesEveryMs) return;
      countedAt = now;
      const totals: Record<string, number> = Object.fromEntries(STATES.map((s) => [s, 0]));
      const all = await Promise.all(owner.runtimes().map((rt) => rt.counts().catch(() => undefined)));
      for (const counts of all) for (const s of STATES) totals[s]! += counts?.[s] ?? 0;
      for (const s of STATES) metrics.queueJobs.set({ queue_type: 'send', state: s }, totals[s]!);
    } finally {
      running = false;
    }
  };
  const timer = setInterval(() => void tick(), everyMs);
  timer.unref();
  void tick();
  return () => clearInterval(timer);
}
