import { serializeError, type Logger } from '@mgw/common';
import type { Lease, LeaseManager } from '@mgw/messenger';

/**
 * Keeps a lease alive while the connection service holds a device (pairing, logout). Calls
 * `onLost` when it moved to someone else; the caller must then stop writing auth state at once.
 */
export function holdLease(
  leases: LeaseManager,
  lease: Lease,
  everyMs: number,
  logger: Logger,
  onLost: () => void,
): () => Promise<void> {
  const timer = setInterval(() => {
    void leases
      .renew(lease)
      .then(async (outcome) => {
        if (outcome === 'lost') {
          logger.warn('lease lost while holding a device', { deviceId: lease.deviceId });
          onLost();
        } else if (outcome === 'missing') {
          const again = await leases.acquire(lease.deviceId).catch(() => undefined);
          if (again?.epoch === lease.epoch + 1) lease.epoch = again.epoch;
          else {
            if (again) await leases.release(again).catch(() => undefined);
            onLost();
          }
        }
      })
      .catch((err: unknown) =>
        logger.warn('lease renewal failed', { deviceId: lease.deviceId, err: serializeError(err) }),
      );
  }, everyMs);
  return async () => {
    clearInterval(timer);
    await leases.release(lease).catch(() => undefined);
  };
}
