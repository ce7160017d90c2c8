import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { keys, newMessageId, newPlatformMessageId, type SendJobData } from '@mgw/contracts';
import {
  Encryption,
  InboundStore,
  MediaStore,
  MessageStore,
  USAGE_CSV_HEADER,
  USAGE_TTL_SECONDS,
  WorkspaceQuotaCounts,
  WorkspaceStore,
  WorkspaceUsage,
  isQuotaRefusal,
  mediaConfig,
  usageCsvCells,
  utcDay,
} from '../src/index.js';

/**
 * A workspace's usage per day (docs/workspaces.md "Usage"), counted by the scripts that write the
 * records — the transition (sent, failed by reason), the receipt (delivered, read), the inbound
 * record (received), the media store (bytes) — and summed over the workspace's devices; and the
 * daily quota's reservation count.
 */
describe('store: workspace usage per day, counted with the records (real Redis)', () => {
  let redis: Redis;
  let messages: MessageStore;
  let inbound: InboundStore;
  let media: MediaStore;
  let workspaces: WorkspaceStore;
  let usage: WorkspaceUsage;
  const encryption = Encryption.fromEnv();
  before(() => {
    redis = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: null });
    messages = new MessageStore(redis, 60);
    inbound = new InboundStore(redis, encryption, 60);
    media = new MediaStore(
      redis,
      encryption,
      mediaConfig({
        MEDIA_RETENTION_SECONDS: 3600,
        MEDIA_URL_TTL_SECONDS: 3600,
        MEDIA_DEVICE_MAX_OBJECTS: 100,
        MEDIA_SWEEP_INTERVAL_MS: 1000,
      }),
    );
    workspaces = new WorkspaceStore(redis);
    usage = new WorkspaceUsage(redis, workspaces);
  });
  after(async () => {
    await redis.quit();
  });

  const id = (p: string) => `${p}${randomBytes(4).toString('hex')}`;
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

  it('When two devices of a workspace send, get receipts, fail, receive and store media, then its day counts each once, failures by reason, and nothing of another workspace', async () => {
    const ws = id('u');
    const other = id('o');
    for (const w of [ws, other]) expect(await workspaces.create({ id: w, name: w })).to.not.equal('exists');
    const [one, two, theirs] = [id('d'), id('d'), id('d')];
    await workspaces.addDevice(ws, one);
    await workspaces.addDevice(ws, two);
    await workspaces.addDevice(other, theirs);
    const now = new Date();
    const { day } = utcDay(now.getTime());

    const [a, b, c] = [job(one), job(one), job(two)];
    for (const j of [a, b, c]) {
      await messages.claim(j);
      await messages.markSent(j, now);
      await messages.markSent(j, now); // a retried bookkeeping step counts nothing
    }
    // By the WhatsApp id (the receipt script) and by the message id (the transition), twice each.
    for (let i = 0; i < 2; i++) {
      await messages.markReceipts(one, [
        { platformMessageId: a.platformMessageId, status: 'delivered', at: now },
        { platformMessageId: a.platformMessageId, status: 'read', at: now },
      ]);
      await messages.markReceipt(two, c.messageId, 'delivered', now);
    }
    const [f1, f2] = [job(two), job(two)];
    await messages.markFailed(f1, 'not_on_whatsapp', now);
    await messages.markFailed(f1, 'not_on_whatsapp', now);
    await messages.markFailed(f2, 'opted_out', now);
    const received = {
      platformMessageId: newPlatformMessageId(),
      from: '15551230002',
      contact: { phone: '15551230002' },
      text: 'hi',
      receivedAt: now,
    };
    await inbound.record(one, received);
    await inbound.record(one, received); // redelivered after a reconnect: recorded once
    const stored = await media.put(two, {
      bytes: randomBytes(1234),
      mimeType: 'image/png',
      source: 'upload',
    });
    expect(isQuotaRefusal(stored)).to.equal(false);
    // Another workspace's device: counted there only.
    const t = job(theirs);
    await messages.claim(t);
    await messages.markSent(t, now);

    const [today] = await usage.days(ws, day, day);
    expect(today).to.deep.equal({
      day,
      accepted: 0, // counted by the API's accept call, not here
      otp: 0,
      sent: 3,
      delivered: 2, // a read message was delivered
      read: 1,
      failed: 2,
      received: 1,
      mediaBytes: 1234,
      failedByReason: { not_on_whatsapp: 1, opted_out: 1 },
    });
    expect((await usage.days(other, day, day))[0]).to.include({ sent: 1, delivered: 0, received: 0 });
    const ttl = await redis.ttl(keys.deviceDayUsage(one, day));
    expect(ttl).to.be.greaterThan(USAGE_TTL_SECONDS - 60);

    const cells = usageCsvCells(today!);
    expect(cells).to.have.length(USAGE_CSV_HEADER.length - 2);
    expect(cells[USAGE_CSV_HEADER.indexOf('failed:opted_out') - 2]).to.equal(1);
  });

  it('When a range is read, then it has every day zero-filled, oldest first', async () => {
    const ws = id('r');
    await workspaces.create({ id: ws, name: ws });
    const days = await usage.days(ws, '2026-02-27', '2026-03-02');
    expect(days.map((d) => d.day)).to.deep.equal(['2026-02-27', '2026-02-28', '2026-03-01', '2026-03-02']);
    expect(days.every((d) => d.sent === 0 && Object.keys(d.failedByReason).length === 0)).to.equal(true);
  });

  it("When default's usage is read, then a device linked under default since the start counts, a device of another workspace does not", async () => {
    const linked = id('l');
    const given = id('g');
    const ws = id('w');
    await workspaces.create({ id: ws, name: ws });
    await workspaces.addDevice(ws, given);
    await redis.sadd(keys.linkedDevices(), linked, given);
    try {
      const devices = await usage.devicesOf('default');
      expect(devices).to.include(linked);
      expect(devices).to.not.include(given);
    } finally {
      await redis.srem(keys.linkedDevices(), linked, given);
    }
  });

  /** A workspace without devices: its day's count starts from nothing. */
  const none = async () => [];

  it("When a day's count starts (a quota set mid-day), then it starts from what the devices accepted that day; a count removed is not brought back by a give-back", async () => {
    const counts = new WorkspaceQuotaCounts(redis);
    const ws = id('s');
    const [d1, d2] = [id('sd'), id('sd')];
    const { day } = utcDay();
    await redis.hset(keys.deviceDayUsage(d1, day), 'accepted', '4');
    await redis.hset(keys.deviceDayUsage(d2, day), 'accepted', '3');
    let asked = 0;
    const devices = async () => (asked++, [d1, d2]);
    expect(await counts.reserveDay(ws, 1, 8, devices)).to.deep.include({ reserved: true, count: 8 });
    expect(await counts.reserveDay(ws, 1, 8, devices)).to.deep.equal({ reserved: false, count: 8 });
    expect(asked, 'devices read once, when the count started').to.equal(1);
    // Removed (as the quota's removal does), a late give-back writes nothing.
    await redis.del(keys.workspaceDayCount(ws, day));
    await counts.giveBackDay(ws, day, 1);
    expect(await redis.exists(keys.workspaceDayCount(ws, day))).to.equal(0);
    expect(await counts.reserveDay(ws, 2, 8, devices)).to.deep.equal({ reserved: false, count: 7 });
  });

  it('When the daily quota is reserved concurrently, then the day never counts past it; what is given back is room again', async () => {
    const counts = new WorkspaceQuotaCounts(redis);
    const ws = id('q');
    const tries = await Promise.all(Array.from({ length: 20 }, () => counts.reserveDay(ws, 3, 10, none)));
    const reserved = tries.filter((r) => r.reserved);
    expect(reserved).to.have.length(3);
    const { day } = utcDay();
    expect(await redis.get(keys.workspaceDayCount(ws, day))).to.equal('9');
    expect((await counts.reserveDay(ws, 2, 10, none)).reserved).to.equal(false);
    await counts.giveBackDay(ws, day, 3);
    expect(await counts.reserveDay(ws, 2, 10, none)).to.deep.include({ reserved: true, count: 8 });
    expect(await redis.ttl(keys.workspaceDayCount(ws, day))).to.be.greaterThan(86_400);
  });
});
