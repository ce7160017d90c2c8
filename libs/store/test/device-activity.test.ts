import { expect } from 'chai';
import { Redis } from 'ioredis';
import { keys, newMessageId, newPlatformMessageId, type SendJobData } from '@mgw/contracts';
import { DEVICE_ACTIVITY_TTL_SECONDS, DeviceActivity, MessageStore } from '../src/index.js';

describe("store: a device's hourly sending activity, counted by the transition script (real Redis)", () => {
  let redis: Redis;
  let messages: MessageStore;
  let activity: DeviceActivity;
  before(() => {
    redis = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: null });
    messages = new MessageStore(redis, 60);
    activity = new DeviceActivity(redis);
  });
  after(async () => {
    await redis.quit();
  });

  const HOUR = 3_600_000;
  const newDevice = () => `act-${Math.random().toString(36).slice(2, 8)}`;
  const job = (deviceId: string): SendJobData => ({
    kind: 'send',
    messageId: newMessageId(),
    platformMessageId: newPlatformMessageId(),
    deviceId,
    to: '15551230001',
    contentId: newMessageId(),
    linkGeneration: 0,
    enqueuedAt: Date.now(),
  });
  const zero = { sent: 0, delivered: 0, read: 0, failed: 0 };

  it('When messages are sent, receipted twice, and one fails, then each status of each message counts once, with no webhook set', async () => {
    const deviceId = newDevice();
    const now = new Date();
    const [a, b, c] = [job(deviceId), job(deviceId), job(deviceId)];
    for (const j of [a, b]) {
      await messages.claim(j);
      await messages.markSent(j, now);
      await messages.markSent(j, now); // a retried bookkeeping step changes nothing
    }
    await messages.markReceipt(deviceId, a.messageId, 'delivered', now);
    await messages.markReceipt(deviceId, a.messageId, 'delivered', now);
    await messages.markReceipt(deviceId, a.messageId, 'read', now);
    await messages.markReceipt(deviceId, a.messageId, 'read', now);
    await messages.markReceipt(deviceId, b.messageId, 'delivered', now);
    expect(await messages.markFailed(c, 'not_on_whatsapp', now)).to.equal(true);
    expect(await messages.markFailed(c, 'not_on_whatsapp', now)).to.equal(false);
    // Nothing moves a failed message: a stray receipt for it counts nothing.
    await messages.markReceipt(deviceId, c.messageId, 'read', now);

    const hours = await activity.lastHours(deviceId, 24, now.getTime());
    expect(hours).to.have.length(24);
    expect(hours[23]).to.deep.equal({
      hour: new Date(Math.floor(now.getTime() / HOUR) * HOUR).toISOString(),
      sent: 2,
      delivered: 2, // a read message was delivered
      read: 1,
      failed: 1,
    });
    expect(hours.slice(0, 23).every((h) => h.sent + h.delivered + h.read + h.failed === 0)).to.equal(true);
    expect(await redis.exists(keys.eventOutbox(deviceId)), 'no webhook: no events').to.equal(0);
    const ttl = await redis.ttl(keys.deviceActivity(deviceId, now.toISOString()));
    expect(ttl).to.be.within(DEVICE_ACTIVITY_TTL_SECONDS - 5, DEVICE_ACTIVITY_TTL_SECONDS);
  });

  it('When a read receipt overtakes the sent bookkeeping, then sent, delivered and read count once each, in the hour each happened', async () => {
    const deviceId = newDevice();
    const now = Date.now();
    const sentAt = new Date(now - 2 * HOUR);
    const readAt = new Date(now - HOUR);
    const j = job(deviceId);
    await messages.claim(j);
    // The receipt lands first: nothing is counted before the message is known to be sent.
    await messages.markReceipt(deviceId, j.messageId, 'read', readAt);
    expect((await activity.lastHours(deviceId, 3, now)).map(({ hour: _, ...c }) => c)).to.deep.equal([
      zero,
      zero,
      zero,
    ]);
    await messages.markSent(j, sentAt);
    await messages.markSent(j, sentAt);
    await messages.markReceipt(deviceId, j.messageId, 'read', readAt);

    const [twoAgo, oneAgo, current] = await activity.lastHours(deviceId, 3, now);
    expect(twoAgo).to.include({ sent: 1, delivered: 0, read: 0, failed: 0 });
    // The read receipt implied the delivery: both at the read's time.
    expect(oneAgo).to.include({ sent: 0, delivered: 1, read: 1, failed: 0 });
    expect(current).to.include(zero);
  });

  it('When the hours asked span no activity, then every hour is there, oldest first, zero-filled, on hour boundaries', async () => {
    const now = Date.parse('2026-11-23T18:42:10.500Z');
    const hours = await activity.lastHours(newDevice(), 24, now);
    expect(hours[0]).to.deep.equal({ hour: '2026-11-22T19:00:00.000Z', ...zero });
    expect(hours[23]).to.deep.equal({ hour: '2026-11-23T18:00:00.000Z', ...zero });
    expect(
      hours.every((h, i) => i === 0 || Date.parse(h.hour) - Date.parse(hours[i - 1]!.hour) === HOUR),
    ).to.equal(true);
  });
});
