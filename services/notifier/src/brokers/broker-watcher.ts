import { Subscription, serializeError, type Logger, type RedisClient } from '@mgw/common';
import { keys } from '@mgw/contracts';
import type { BrokerRelay } from './relay.js';

/** Devices woken together by a sweep. */
const SWEEP_CHUNK = 200;

/**
 * Wakes the broker relays: at once when a device's event log grows (`mgw_emit` publishes the
 * device id on `keys.eventLogChannel()`, the channel the API's event streams listen to), and on a
 * periodic sweep over every linked device and every device with a webhook (the sets the event
 * log trimmer walks: a missed publication, a dead notifier's devices, the events of a device whose
 * publish failed on another notifier). A device in neither set (unlinked, no webhook) is served
 * when it next emits. The subscription is restored
 * after each reconnect, followed by a sweep.
 *
 * The notifier's readiness does not depend on it nor on any broker: webhooks flow whatever the
 * brokers do (a broker down shows in `mgw_broker_connected` and the backlog gauges, and alerts).
 */
export class BrokerWatcher {
  private subscription?: Subscription;
  private timer?: NodeJS.Timeout;
  private sweeping: Promise<void> = Promise.resolve();

  constructor(
    private readonly o: {
      relays: readonly BrokerRelay[];
      redis: RedisClient;
      sweepMs: number;
      logger: Logger;
      subscribedGauge?: { set(labels: { channel: string }, value: number): void };
    },
  ) {}

  async start(subscriber: RedisClient): Promise<void> {
    this.subscription = new Subscription({
      client: subscriber,
      channels: [keys.eventLogChannel()],
      onMessage: (_channel, deviceId) => this.o.relays.forEach((r) => r.wake(deviceId)),
      onSubscribed: () => this.runSweep(),
      gauge: this.o.subscribedGauge,
      logger: this.o.logger,
    });
    this.timer = setInterval(() => this.runSweep(), this.o.sweepMs);
    this.timer.unref();
    await this.subscription.start();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.subscription?.stop();
    await this.sweeping;
  }

  /** Every linked device and every device with a webhook, woken on every relay. */
  async sweep(): Promise<void> {
    for (const set of [keys.linkedDevices(), keys.webhookDevices()]) {
      let cursor = '0';
      do {
        const [next, devices] = await this.o.redis.sscan(set, cursor, 'COUNT', SWEEP_CHUNK);
        cursor = next;
        for (const d of devices) this.o.relays.forEach((r) => r.wake(d));
      } while (cursor !== '0');
    }
  }

  private runSweep(): void {
    this.sweeping = this.sweeping
      .then(() => this.sweep())
      .catch((err: unknown) => {
        this.o.logger.warn('broker sweep failed', { err: serializeError(err) });
      });
  }
}
