import { serializeError, type Logger } from '@mgw/common';
import type { Lease, LeaseManager } from '@mgw/messenger';

/**
 * Keeps a lease alive while the connection service holds a device (pairing, logout). Calls
 * `onLost` when it moved to someone else; the caller must then stop writing auth state at once.
 * The returned release waits for a renewal in flight (which may re-acquire an expired lease with a
 * new epoch) before it releases, so nothing renews or re-acquires the lease after its release.
 */
export function holdLease(
  leases: LeaseManager,
  lease: Lease,
  everyMs: number,
  logger: Logger,
  onLost: () => void,
): () => Promise<void> {
  let released = false;
  let inflight: Promise<void> | undefined;
  const round = async () => {
    const outcome = await leases.renew(lease);
    if (outcome === 'lost') {
      logger.warn('lease lost while holding a device', { deviceId: lease.deviceId });
      onLost();
    } else if (outcome === 'missing' && !released) {
      const again = await leases.acquire(lease.deviceId).catch(() => undefined);
      if (again?.epoch === lease.epoch + 1) lease.epoch = again.epoch;
      else {
        if (again) await leases.release(again).catch(() => undefined);
        onLost();
      }
    }
  };
  const timer = setInterval(() => {
    // One round at a time, and none once the release began.
    if (released || inflight) return;
    inflight = round()
      .catch((err: unknown) => {
        logger.warn('lease renewal failed', { deviceId: lease.deviceId, err: serializeError(err) });
      })
      .finally(() => (inflight = undefined));
  }, everyMs);
  return async () => {
    released = true;
    clearInterval(timer);
    await inflight;
    await leases.release(lease).catch(() => undefined);
  };
}
