import { expect } from 'chai';
import { Redis } from 'ioredis';
import {
  FAILURE_REASONS,
  PRIORITY,
  keys,
  newMessageId,
  newPlatformMessageId,
  type BatchCounts,
  type SendJobData,
} from '@mgw/contracts';
import {
  BatchStore,
  ContentStore,
  Encryption,
  MessageStore,
  cancelBatchMessages,
  controlBatch,
  openSendQueue,
  stageQueued,
  wakePausedHolds,
  type SendQueue,
} from '../src/index.js';

describe('store: batch control — pause, resume, cancel, held messages and the batch index (real Redis)', () => {
  let redis: Redis;
  let messages: MessageStore;
  let batches: BatchStore;
  let contents: ContentStore;
  const queues = new Map<string, SendQueue>();
  before(() => {
    redis = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: null });
    messages = new MessageStore(redis, 600);
    batches = new BatchStore(redis, 600);
    contents = new ContentStore(redis, Encryption.fromEnv(), 600);
  });
  after(async () => {
    await Promise.all([...queues.values()].map((q) => q.obliterate({ force: true }).then(() => q.close())));
    await redis.quit();
  });

  /** A batch of `n` accepted the way the API does: content, quota, batch counts and index, one job each. */
  async function acceptBatch(
    n: number,
    deviceId = `bc-${Math.random().toString(36).slice(2, 8)}`,
    at = new Date(),
    delay = 0,
  ): Promise<{ deviceId: string; batchId: string; jobs: SendJobData[]; queue: SendQueue }> {
    const queue = queues.get(deviceId) ?? openSendQueue(redis, deviceId);
    queues.set(deviceId, queue);
    const contentId = newMessageId();
    const batchId = newMessageId();
    const jobs: SendJobData[] = Array.from({ length: n }, (_, i) => ({
      kind: 'send',
      messageId: newMessageId(),
      platformMessageId: newPlatformMessageId(),
      deviceId,
      to: String(15551240000 + i),
      contentId,
      batchId,
      linkGeneration: 0,
      enqueuedAt: Date.now(),
    }));
    const multi = redis.multi();
    contents.stage(multi, deviceId, contentId, { text: 'hello' }, n);
    stageQueued(multi, deviceId, n, ContentStore.sizeOf({ text: 'hello' }));
    batches.stage(multi, deviceId, batchId, n, at);
    await multi.exec();
    await queue.addBulk(
      jobs.map((data) => ({
        name: 'send',
        data,
        opts: { jobId: data.messageId, priority: PRIORITY.send, delay },
      })),
    );
    return { deviceId, batchId, jobs, queue };
  }

  const sumOfStatuses = (c: BatchCounts) => c.queued + c.sent + c.delivered + c.read + c.failed;

  it('When a batch is cancelled, then the claim refuses its messages atomically and a resume cannot undo it', async () => {
    const { deviceId, batchId, jobs } = await acceptBatch(3);
    expect(await messages.claim(jobs[0]!)).to.equal('claimed');
    expect(await controlBatch(redis, deviceId, batchId, 'cancel')).to.equal('changed');
    expect(await messages.claim(jobs[1]!)).to.equal('cancelled');
    // A message claimed before the cancel and retried after it is refused too (no second attempt).
    expect(await messages.claim(jobs[0]!)).to.equal('cancelled');
    expect(await redis.hexists(keys.message(deviceId, jobs[1]!.messageId), 'sendingAt')).to.equal(0);
    expect(await controlBatch(redis, deviceId, batchId, 'cancel')).to.equal('same');
    expect(await controlBatch(redis, deviceId, batchId, 'resume')).to.equal('cancelled');
    expect(await controlBatch(redis, deviceId, batchId, 'pause')).to.equal('cancelled');
    expect((await batches.get(deviceId, batchId))!.state).to.equal('cancelled');
  });

  it('When a batch is paused, then the claim refuses its messages until it is resumed; a repeat of either changes nothing', async () => {
    const { deviceId, batchId, jobs } = await acceptBatch(2);
    expect(await controlBatch(redis, deviceId, batchId, 'pause')).to.equal('changed');
    expect(await controlBatch(redis, deviceId, batchId, 'pause')).to.equal('same');
    expect(await messages.claim(jobs[0]!)).to.equal('paused');
    const paused = await batches.get(deviceId, batchId);
    expect(paused).to.include({ state: 'paused' });
    expect(paused!.pausedAt).to.be.a('string');
    expect(await controlBatch(redis, deviceId, batchId, 'resume')).to.equal('changed');
    expect(await controlBatch(redis, deviceId, batchId, 'resume')).to.equal('same');
    expect(await messages.claim(jobs[0]!)).to.equal('claimed');
    expect(await batches.get(deviceId, batchId)).to.not.have.property('pausedAt');
    expect(await controlBatch(redis, deviceId, 'no-such-batch', 'pause')).to.equal('missing');
    expect(await controlBatch(redis, `${deviceId}-other`, batchId, 'pause')).to.equal('missing');
  });

  it('When every message of a batch left the queue, then it is completed and pause, resume and cancel are refused as such', async () => {
    const { deviceId, batchId, jobs } = await acceptBatch(2);
    for (const j of jobs) await messages.markFailed(j, FAILURE_REASONS.invalidNumber);
    const done = await batches.get(deviceId, batchId);
    expect(done).to.include({ state: 'completed' });
    for (const action of ['pause', 'resume', 'cancel'] as const)
      expect(await controlBatch(redis, deviceId, batchId, action), action).to.equal('completed');
  });

  it('When a queued message is held, then its record shows held and its batch counts it; the hold ends when it is claimed or fails', async () => {
    const { deviceId, batchId, jobs } = await acceptBatch(3);
    const until = Date.now() + 60_000;
    for (const j of jobs) expect(await messages.hold(j, 'first_contact_cap', until)).to.equal(true);
    const record = await messages.get(deviceId, jobs[0]!.messageId);
    expect(record).to.deep.include({
      status: 'queued',
      held: { reason: 'first_contact_cap', until: new Date(until).toISOString() },
    });
    expect(record!.to).to.equal(jobs[0]!.to);
    expect((await batches.get(deviceId, batchId))!.counts).to.include({ queued: 3, held: 3 });

    expect(await messages.claim(jobs[0]!)).to.equal('claimed');
    expect(await messages.get(deviceId, jobs[0]!.messageId)).to.not.have.property('held');
    await messages.markFailed(jobs[1]!, FAILURE_REASONS.notOnWhatsApp);
    expect(await messages.get(deviceId, jobs[1]!.messageId)).to.not.have.property('held');
    // A failed message is never held again.
    expect(await messages.hold(jobs[1]!, 'daily_cap', until)).to.equal(false);
    const counts = (await batches.get(deviceId, batchId))!.counts;
    expect(counts).to.include({ queued: 2, failed: 1, held: 1 });
    expect(sumOfStatuses(counts)).to.equal(3);
    expect(counts.held).to.be.at.most(counts.queued);
  });

  it('When a batch_paused hold comes after the resume, then it is refused (the message goes on instead)', async () => {
    const { deviceId, batchId, jobs } = await acceptBatch(1);
    expect(await messages.hold(jobs[0]!, 'batch_paused', Date.now() + 60_000)).to.equal(false);
    await controlBatch(redis, deviceId, batchId, 'pause');
    expect(await messages.hold(jobs[0]!, 'batch_paused', Date.now() + 60_000)).to.equal(true);
  });

  it('When a batch is cancelled, then the sweep fails every message no attempt started (cancelled), removes their jobs, leaves a claimed one to its attempt, and the counts sum to total', async () => {
    const { deviceId, batchId, jobs, queue } = await acceptBatch(5);
    // Another batch of the same device is not touched.
    const other = await acceptBatch(2, deviceId);
    expect(await messages.claim(jobs[0]!)).to.equal('claimed');
    await messages.hold(jobs[1]!, 'daily_cap', Date.now() + 60_000);
    await controlBatch(redis, deviceId, batchId, 'cancel');
    expect(await cancelBatchMessages({ redis, queue, messages }, deviceId, batchId)).to.equal(4);
    for (const j of jobs.slice(1)) {
      expect(await messages.get(deviceId, j.messageId)).to.deep.include({
        status: 'failed',
        error: 'cancelled',
      });
      expect(await queue.getJob(j.messageId)).to.equal(undefined);
    }
    expect((await messages.get(deviceId, jobs[0]!.messageId))!.status).to.equal('queued');
    expect(await queue.getJob(jobs[0]!.messageId)).to.not.equal(undefined);
    const batch = (await batches.get(deviceId, batchId))!;
    expect(batch.counts).to.include({ queued: 1, failed: 4, held: 0 });
    expect(sumOfStatuses(batch.counts)).to.equal(5);
    for (const j of other.jobs) expect(await queue.getJob(j.messageId)).to.not.equal(undefined);
    // Its attempt's send goes out and is recorded: the batch's last message leaves the queue.
    await messages.markSent(jobs[0]!, new Date());
    const after = (await batches.get(deviceId, batchId))!;
    expect(after).to.include({ state: 'cancelled' });
    expect(after.counts).to.include({ queued: 0, sent: 1, failed: 4 });
  });

  it('When a paused batch is resumed, then its messages held for the pause are promoted at once and other holds are left', async () => {
    // Held jobs wait delayed in the queue, as the sender leaves them.
    const deviceId = `bc-${Math.random().toString(36).slice(2, 8)}`;
    const { batchId, jobs, queue } = await acceptBatch(3, deviceId, new Date(), 60_000);
    await controlBatch(redis, deviceId, batchId, 'pause');
    const later = Date.now() + 60_000;
    for (const j of jobs.slice(0, 2)) await messages.hold(j, 'batch_paused', later);
    await messages.hold(jobs[2]!, 'daily_cap', later);
    await controlBatch(redis, deviceId, batchId, 'resume');
    expect(await wakePausedHolds({ redis, queue, messages }, deviceId, batchId)).to.equal(2);
    expect(await queue.getJobState(jobs[0]!.messageId)).to.not.equal('delayed');
    expect(await queue.getJobState(jobs[1]!.messageId)).to.not.equal('delayed');
    expect(await queue.getJobState(jobs[2]!.messageId)).to.equal('delayed');
  });

  it("When a device has batches, then they page newest first with a cursor, batches accepted in one millisecond included, and another device's are not listed", async () => {
    const deviceId = `bc-${Math.random().toString(36).slice(2, 8)}`;
    const base = Date.now() - 10_000;
    const ids: string[] = [];
    // Five batches: two pairs accepted in the same millisecond.
    for (const offset of [0, 1, 1, 2, 2])
      ids.push((await acceptBatch(1, deviceId, new Date(base + offset))).batchId);
    await acceptBatch(1, `${deviceId}-x`);
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await batches.list(deviceId, 2, cursor);
      seen.push(...page.batches.map((b) => b.batchId));
      for (const b of page.batches) expect(b).to.include({ state: 'active', total: 1 });
      cursor = page.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).to.equal(3);
    expect(seen).to.have.length(5);
    expect(new Set(seen)).to.deep.equal(new Set(ids));
    const created = await Promise.all(
      seen.map(async (id) => Date.parse((await batches.get(deviceId, id))!.createdAt)),
    );
    expect(created).to.deep.equal([...created].sort((a, b) => b - a));
    expect((await batches.list(deviceId, 100)).batches.map((b) => b.batchId)).to.deep.equal(seen);
  });

  it('When a batch expired, then the index drops it as it is read, and old entries are trimmed when a batch is accepted', async () => {
    const deviceId = `bc-${Math.random().toString(36).slice(2, 8)}`;
    const old = await acceptBatch(1, deviceId, new Date(Date.now() - 700_000));
    const gone = await acceptBatch(1, deviceId);
    await redis.del(keys.batch(deviceId, gone.batchId));
    expect(await redis.zscore(keys.batchIndex(deviceId), old.batchId)).to.equal(null);
    const fresh = await acceptBatch(1, deviceId);
    expect((await batches.list(deviceId, 10)).batches.map((b) => b.batchId)).to.include(fresh.batchId);
    expect(await redis.zscore(keys.batchIndex(deviceId), gone.batchId)).to.equal(null);
    expect(await redis.ttl(keys.batchIndex(deviceId))).to.be.within(1, 600);
  });
});
