import { expect } from 'chai';
import { closeRedis, createLogger, createRedis, waitForRedis, type RedisClient } from '@mgw/common';
import { keys } from '@mgw/contracts';
import { Encryption, WebhookStore } from '@mgw/store';
import { waitFor } from '@mgw/testing';
import { OutboxWatcher } from '../src/outbox-watcher.js';

/** What the watcher asked of the dispatcher and the target cache. */
function recorder() {
  const calls = {
    kicked: [] as [string, boolean | undefined][],
    forgotten: [] as string[],
  };
  return {
    calls,
    dispatcher: {
      kick: async (deviceId: string, sweep?: boolean) => {
        calls.kicked.push([deviceId, sweep]);
      },
    },
    targets: { forget: (deviceId: string) => calls.forgotten.push(deviceId) },
  };
}

describe('notifier: the outbox watcher (real Redis)', () => {
  let redis: RedisClient;
  let subscriber: RedisClient;
  let webhooks: WebhookStore;
  const logger = createLogger({ level: 'silent', service: 'notifier-test' });
  const newDevice = () => `ow-${Math.random().toString(36).slice(2, 8)}`;

  beforeEach(async () => {
    redis = createRedis(process.env.REDIS_URL!, 'worker', 'notifier-test');
    subscriber = createRedis(process.env.REDIS_URL!, 'subscriber', 'notifier-test-sub');
    await Promise.all([waitForRedis(redis), waitForRedis(subscriber)]);
    webhooks = new WebhookStore(redis, Encryption.fromEnv(), 0);
  });
  afterEach(() => closeRedis(subscriber, redis));

  it('When it starts, then every device with a webhook is swept (served if it has work, taken over from a notifier seen holding it)', async () => {
    const deviceId = newDevice();
    await webhooks.set(deviceId, { url: 'https://hooks.example.com/x' });
    const r = recorder();
    const watcher = new OutboxWatcher({ webhooks, ...r, sweepMs: 60_000, logger });

    await watcher.start(subscriber);
    await watcher.stop();

    expect(r.calls.kicked).to.deep.include([deviceId, true]);
  });

  it('When a device publishes an event or its webhook changes, then it is served at once (and a changed webhook is read again); after stop, it no longer listens', async () => {
    const r = recorder();
    const watcher = new OutboxWatcher({
      webhooks: { devices: async () => [] },
      ...r,
      sweepMs: 60_000,
      logger,
    });
    await watcher.start(subscriber);
    const [evented, changed] = [newDevice(), newDevice()];

    await redis.publish(keys.eventsChannel(), evented);
    await webhooks.set(changed, { url: 'https://hooks.example.com/y' });
    await waitFor(() => r.calls.kicked.length === 2, { timeoutMs: 5000, what: 'two kicks' });
    await watcher.stop();

    expect(r.calls.kicked).to.deep.equal([
      [evented, undefined],
      [changed, undefined],
    ]);
    expect(r.calls.forgotten).to.deep.equal([changed]);
    expect(await redis.pubsub('NUMSUB', keys.eventsChannel())).to.deep.equal([keys.eventsChannel(), 0]);
  });
});
