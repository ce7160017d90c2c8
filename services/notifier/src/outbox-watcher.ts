import { Subscription, serializeError, type Logger, type RedisClient } from '@mgw/common';
import { keys } from '@mgw/contracts';
import type { WebhookStore } from '@mgw/store';
import type { DeliveryDispatcher } from './dispatcher.js';
import type { TargetCache } from './target-cache.js';

export interface OutboxWatcherOptions {
  webhooks: Pick<WebhookStore, 'devices'>;
  targets: Pick<TargetCache, 'forget'>;
  /** `kick` serves a device that has work and no notifier (`sweep`: even one seen held a moment ago). */
  dispatcher: Pick<DeliveryDispatcher, 'kick'> & Partial<Pick<DeliveryDispatcher, 'retriesChanged'>>;
  /** How often every device is looked at even without a notification. */
  sweepMs: number;
  logger: Logger;
  /** 1 per channel while subscribed (`mgw_redis_subscribed`). */
  subscribedGauge?: { set(labels: { channel: string }, value: number): void };
}

/** Devices looked at together by a sweep. */
const SWEEP_BATCH = 50;

/**
 * Keeps every device's deliveries going: at once when an event is written to its outbox (the
 * notification wakes a notifier; no polling delay), and on a periodic sweep over every device
 * with a webhook, which takes over the devices of a notifier that died (their leases lapsed) and
 * covers a missed notification. The subscription is confirmed with Redis, restored after every
 * reconnect, and followed by a sweep each time it comes back (notifications published while it
 * was away are lost); `subscribed` is false meanwhile, and the notifier is then not ready.
 */
export class OutboxWatcher {
  private subscription?: Subscription;
  private timer?: NodeJS.Timeout;
  private sweeping: Promise<void> = Promise.resolve();

  constructor(private readonly opts: OutboxWatcherOptions) {}

  /** Resolves once Redis has confirmed the subscription (the first sweep is then under way). */
  async start(subscriber: RedisClient): Promise<void> {
    const { targets, dispatcher, sweepMs, logger } = this.opts;
    this.subscription = new Subscription({
      client: subscriber,
      channels: [keys.eventsChannel(), keys.webhooksChannel()],
      onMessage: (channel, deviceId) => {
        // A webhook set, rotated, disabled or removed (or its retries made due by "retry now"):
        // its next delivery reads it again, and its retries are read again.
        if (channel === keys.webhooksChannel()) {
          targets.forget(deviceId);
          dispatcher.retriesChanged?.(deviceId);
        }
        void dispatcher.kick(deviceId);
      },
      // The first sweep, and a catch-up after each time without the subscription.
      onSubscribed: () => this.runSweep(),
      gauge: this.opts.subscribedGauge,
      logger,
    });
    this.timer = setInterval(() => this.runSweep(), sweepMs);
    await this.subscription.start();
  }

  /** True while Redis has confirmed the subscription: events are then served as they come. */
  get subscribed(): boolean {
    return this.subscription?.subscribed ?? false;
  }

  /** Why events are not served as they come now; undefined while they are. */
  get problem(): string | undefined {
    return this.subscription ? this.subscription.problem : 'not started';
  }

  /** Stops listening and sweeping; resolves when the sweep under way ends. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.subscription?.stop();
    await this.sweeping;
  }

  /** Every device with a webhook: served if it has work and no live notifier serves it. */
  async sweep(): Promise<void> {
    const { webhooks, dispatcher } = this.opts;
    const devices = await webhooks.devices();
    for (let i = 0; i < devices.length; i += SWEEP_BATCH) {
      await Promise.all(devices.slice(i, i + SWEEP_BATCH).map((d) => dispatcher.kick(d, true)));
    }
  }

  private runSweep(): void {
    this.sweeping = this.sweeping
      .then(() => this.sweep())
      .catch((err: unknown) => {
        this.opts.logger.warn('sweep failed', { err: serializeError(err) });
      });
  }
}
