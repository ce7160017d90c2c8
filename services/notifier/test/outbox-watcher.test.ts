import { once } from 'node:events';
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
  /** A watcher telling `r` what it does, sweeping the devices `source` gives (a minute apart). */
  const watcherOf = (
    r: ReturnType<typeof recorder>,
    source: ConstructorParameters<typeof OutboxWatcher>[0]['webhooks'] = { devices: async () => [] },
  ) => new OutboxWatcher({ webhooks: source, ...r, sweepMs: 60_000, logger });

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
    const watcher = watcherOf(r, webhooks);

    await watcher.start(subscriber);
    await watcher.stop();

    expect(r.calls.kicked).to.deep.include([deviceId, true]);
  });

  it('When a device publishes an event or its webhook changes, then it is served at once (and a changed webhook is read again); after stop, it no longer listens', async () => {
    const r = recorder();
    const watcher = watcherOf(r);
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

  it('When it starts as its connection has just connected (before the ready check), then Redis has the subscription and an event wakes its device at once', async () => {
    // On a loaded machine the notifier subscribed in this window: ioredis then dropped the
    // connection and reconnected without the subscription (CLIENT LIST: sub=0 cmd=info).
    const fresh = createRedis(process.env.REDIS_URL!, 'subscriber', 'notifier-test-fresh');
    const r = recorder();
    const watcher = watcherOf(r);
    try {
      await once(fresh, 'connect');
      await watcher.start(fresh);
      await waitForRedis(fresh);
      const deviceId = newDevice();
      await redis.publish(keys.eventsChannel(), deviceId);
      await waitFor(() => r.calls.kicked.length === 1, { timeoutMs: 3000, what: 'the kick' });

      expect(r.calls.kicked).to.deep.equal([[deviceId, undefined]]);
      expect(watcher.subscribed).to.equal(true);
      const [, count] = await redis.pubsub('NUMSUB', keys.eventsChannel());
      expect(count).to.equal(1);
    } finally {
      await watcher.stop();
      await closeRedis(fresh);
    }
  });

  it('When its subscription is lost and comes back, then it says so meanwhile and sweeps at once (events published meanwhile are not left to the next sweep)', async () => {
    const deviceId = newDevice();
    const r = recorder();
    const watcher = watcherOf(r, { devices: async () => [deviceId] });
    try {
      await watcher.start(subscriber);
      await waitFor(() => r.calls.kicked.length === 1, { timeoutMs: 3000, what: 'the first sweep' });
      await redis.client('KILL', 'TYPE', 'pubsub');
      await waitFor(() => !watcher.subscribed, { timeoutMs: 3000, what: 'the loss noticed' });
      expect(watcher.problem).to.match(/^not subscribed to mgw:[^ ]+, mgw:[^ ]+: /);
      await waitFor(() => watcher.subscribed, { timeoutMs: 5000, what: 'the subscription back' });
      await waitFor(() => r.calls.kicked.length === 2, { timeoutMs: 3000, what: 'the catch-up sweep' });

      expect(r.calls.kicked).to.deep.equal([
        [deviceId, true],
        [deviceId, true],
      ]);
    } finally {
      await watcher.stop();
    }
  });
});
