import type { WebhookStore, WebhookTarget } from '@mgw/store';

/**
 * The webhook targets of the devices this notifier delivers for, each read (and its secrets
 * opened) at most once per `ttlMs`: a busy device's deliveries do not each cost a Redis read and
 * two decryptions. A change (set, rotation, 410, removal) is announced on `keys.webhooksChannel()`
 * and drops the entry at once; `ttlMs` bounds how stale it can be should an announcement be missed. Also remembers each endpoint's failures in a row as last written here, so a
 * success after successes writes nothing.
 */
export class TargetCache {
  private readonly targets = new Map<string, { target: WebhookTarget | undefined; at: number }>();
  private readonly failures = new Map<string, number>();

  constructor(
    private readonly webhooks: WebhookStore,
    private readonly ttlMs = 1000,
  ) {}

  async get(deviceId: string): Promise<WebhookTarget | undefined> {
    const hit = this.targets.get(deviceId);
    if (hit && Date.now() - hit.at < this.ttlMs) return hit.target;
    const target = await this.webhooks.target(deviceId);
    this.targets.set(deviceId, { target, at: Date.now() });
    return target;
  }

  forget(deviceId: string): void {
    this.targets.delete(deviceId);
    this.failures.delete(deviceId);
  }

  /** Resets the failures in a row unless this notifier last saw them at 0. */
  async succeeded(deviceId: string): Promise<void> {
    if (this.failures.get(deviceId) === 0) return;
    await this.webhooks.recordSuccess(deviceId);
    this.failures.set(deviceId, 0);
  }

  async failed(deviceId: string): Promise<number> {
    const n = await this.webhooks.recordFailure(deviceId);
    this.failures.set(deviceId, n);
    return n;
  }
}
