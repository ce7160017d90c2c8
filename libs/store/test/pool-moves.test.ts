import { expect } from 'chai';
import { Redis } from 'ioredis';
import { keys, newMessageId, newPlatformMessageId, type SendJobData } from '@mgw/contracts';
import {
  BatchStore,
  ContentStore,
  Encryption,
  MessageStore,
  PoolBatchStore,
  PoolMoves,
  stageQueued,
} from '../src/index.js';

describe('store: moving a pooled message between the devices of its pool — sent by one device once, never lost (real Redis)', () => {
  let redis: Redis;
  let messages: MessageStore;
  let batches: BatchStore;
  let contents: ContentStore;
  let moves: PoolMoves;
  let pools: PoolBatchStore;
  before(() => {
    redis = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: null });
    messages = new MessageStore(redis, 600);
    batches = new BatchStore(redis, 600);
    contents = new ContentStore(redis, Encryption.fromEnv(), 600);
    moves = new PoolMoves(redis, 600);
    pools = new PoolBatchStore(redis, 600);
  });
  after(() => redis.quit());

  /** A pooled batch part of `n` messages on a device, accepted the way the API writes one (no jobs). */
  async function part(n: number, poolId = `pool-${Math.random().toString(36).slice(2, 8)}`) {
    const deviceId = `pm-${Math.random().toString(36).slice(2, 8)}`;
    const contentId = newMessageId();
    const batchId = newMessageId();
    const jobs: SendJobData[] = Array.from({ length: n }, (_, i) => ({
      kind: 'send',
      messageId: newMessageId(),
      platformMessageId: newPlatformMessageId(),
      deviceId,
      to: String(15551250000 + i),
      contentId,
      batchId,
      linkGeneration: 0,
      enqueuedAt: Date.now(),
      poolId,
    }));
    const multi = redis.multi();
    contents.stage(multi, deviceId, contentId, { text: 'hello' }, n);
    stageQueued(multi, deviceId, n, ContentStore.sizeOf({ text: 'hello' }));
    batches.stage(multi, deviceId, batchId, n);
    await multi.exec();
    return { poolId, deviceId, batchId, contentId, jobs };
  }

  it('When a waiting message is released for a move, then its device never claims or changes it, and it leaves that device’s counts and queue', async () => {
    const { deviceId, batchId, jobs } = await part(3);
    expect(await moves.release(jobs[0]!, 'other')).to.equal('released');
    // A repeat (a move finished again after a crash) is the same answer, changing nothing more.
    expect(await moves.release(jobs[0]!, 'other')).to.equal('released');
    expect(await messages.claim(jobs[0]!)).to.equal('moved');
    expect(await messages.movedTo(jobs[0]!)).to.equal('other');
    // No status change reaches it any more (a late failure of its old job, say).
    await messages.markFailed(jobs[0]!, 'logged_out');
    expect(await redis.hget(keys.message(deviceId, jobs[0]!.messageId), 'status')).to.equal(null);
    expect(await messages.getRecord(deviceId, jobs[0]!.messageId)).to.equal(undefined);
    const batch = (await batches.get(deviceId, batchId))!;
    expect(batch.total).to.equal(2);
    expect(batch.counts.queued).to.equal(2);
    expect(batch.counts.failed).to.equal(0);
    expect(await redis.hget(keys.deviceQueue(deviceId), 'messages')).to.equal('2');
  });

  it('When an attempt is under way on its device, then the message is not released (busy); the attempt’s end decides: before the socket it may move, having reached the socket it stays for good', async () => {
    const { jobs } = await part(2);
    const at = Date.now();
    for (const job of jobs) expect(await messages.claim(job, at)).to.equal('claimed');
    for (const job of jobs) expect(await moves.release(job, 'other')).to.equal('busy');
    // The first found the socket closed; the second wrote and got no ack (it may have reached WhatsApp).
    expect(await messages.endAttempt(jobs[0]!, at, false)).to.equal(true);
    expect(await messages.endAttempt(jobs[1]!, at, true)).to.equal(true);
    expect(await moves.release(jobs[0]!, 'other')).to.equal('released');
    expect(await moves.release(jobs[1]!, 'other')).to.equal('taken');
    expect(await messages.claim(jobs[0]!)).to.equal('moved');
    expect(await messages.movedTo(jobs[1]!)).to.equal(undefined);
  });

  it('When WhatsApp refused the attempt (an error ack) and the message is held, then it may move; held after an attempt that began, it may not', async () => {
    const { deviceId, batchId, jobs } = await part(2);
    const at = Date.now();
    for (const job of jobs) expect(await messages.claim(job, at)).to.equal('claimed');
    const until = Date.now() + 20_000;
    // 463: refused, reached no one — its attempt did not begin the send.
    await messages.endAttempt(jobs[0]!, at, false);
    expect(await messages.hold(jobs[0]!, 'device_paused', until)).to.equal(true);
    // A failure that may have reached WhatsApp (no ack): the attempt stands.
    await messages.endAttempt(jobs[1]!, at, true);
    expect(await messages.hold(jobs[1]!, 'device_paused', until)).to.equal(true);
    expect(await moves.release(jobs[0]!, 'other')).to.equal('released');
    expect(await moves.release(jobs[1]!, 'other')).to.equal('taken');
    // The refused one is now the other device's: its own job finds it moved when the pause ends.
    expect(await messages.claim(jobs[0]!)).to.equal('moved');
    const batch = (await batches.get(deviceId, batchId))!;
    expect(batch.total).to.equal(1);
    expect(batch.counts.held).to.equal(1);
  });

  it('When a claim finds an earlier attempt’s claim still there (its process died mid-attempt), then the send counts as begun for good: a later attempt that ends before the socket does not make it movable', async () => {
    const { deviceId, jobs } = await part(1);
    const job = jobs[0]!;
    const first = Date.now();
    expect(await messages.claim(job, first)).to.equal('claimed');
    // No end recorded (SIGKILL): the job stalls and another sender claims it again.
    expect(await messages.claim(job, first + 5)).to.equal('claimed');
    expect(await messages.endAttempt(job, first + 5, false)).to.equal(true);
    expect(await moves.release(job, 'other')).to.equal('taken');
    expect(await messages.get(deviceId, job.messageId)).to.include({ sendBegan: true });
    // An OTP or a delete could no longer be taken back either.
    expect(await messages.expireUnclaimed(job, 'otp_expired')).to.equal('claimed');
  });

  it('When an attempt’s end names another attempt’s claim, or the record is gone, then nothing is recorded (no claim of another attempt dropped, no key made without a TTL)', async () => {
    const { deviceId, jobs } = await part(2);
    const at = Date.now();
    expect(await messages.claim(jobs[0]!, at)).to.equal('claimed');
    expect(await messages.endAttempt(jobs[0]!, at - 1, false)).to.equal(false);
    expect(await moves.release(jobs[0]!, 'other')).to.equal('busy');
    // jobs[1] was never claimed: it has no record.
    expect(await messages.endAttempt(jobs[1]!, at, true)).to.equal(false);
    expect(await redis.exists(keys.message(deviceId, jobs[1]!.messageId))).to.equal(0);
  });

  it('When every attempt ended before the socket, then an OTP can still be expired and a queued message deleted as unsent: as one never claimed', async () => {
    const { deviceId, jobs } = await part(2);
    const at = Date.now();
    for (const job of jobs) {
      expect(await messages.claim(job, at)).to.equal('claimed');
      expect(await messages.endAttempt(job, at, false)).to.equal(true);
    }
    expect(await messages.get(deviceId, jobs[0]!.messageId)).to.include({
      status: 'queued',
      sendBegan: false,
    });
    expect(await messages.expireUnclaimed(jobs[0]!, 'otp_expired')).to.equal('expired');
    expect(await messages.markDeleted(jobs[1]!, new Date(), true)).to.equal('expired');
  });

  it('When the last moved message lets go of its content, then its bytes leave the quota once, however often it is repeated', async () => {
    const { deviceId, contentId, jobs } = await part(2);
    for (const j of jobs) expect(await moves.release(j, 'other')).to.equal('released');
    expect(await redis.hget(keys.content(deviceId, contentId), 'remaining')).to.equal('2');
    await moves.releaseContent(jobs[0]!);
    await moves.releaseContent(jobs[0]!);
    expect(await redis.hget(keys.content(deviceId, contentId), 'remaining')).to.equal('1');
    await moves.releaseContent(jobs[1]!);
    // A text stays (without its bytes) for the records that show it, as after any last send.
    expect(Number((await redis.hget(keys.content(deviceId, contentId), 'bytes')) ?? 0)).to.equal(0);
    expect(Number((await redis.hget(keys.deviceQueue(deviceId), 'bytes')) ?? 0)).to.equal(0);
  });

  it('When a move begins twice (a second mover, a crash), then the journal keeps the first target, and lists the move until it is finished', async () => {
    const { poolId, deviceId, batchId, jobs } = await part(1);
    const id = jobs[0]!.messageId;
    const first = await moves.begin(poolId, {
      messageId: id,
      from: deviceId,
      to: 'dev-b',
      batchId,
      reason: 'not_linked',
    });
    const second = await moves.begin(poolId, {
      messageId: id,
      from: deviceId,
      to: 'dev-c',
      batchId,
      reason: 'restricted',
    });
    expect(first.to).to.equal('dev-b');
    expect(second.to).to.equal('dev-b');
    expect(await moves.unfinished(poolId)).to.deep.equal([
      { messageId: id, from: deviceId, to: 'dev-b', batchId, reason: 'not_linked' },
    ]);
    await moves.finish(poolId, id);
    expect(await moves.unfinished(poolId)).to.deep.equal([]);
  });

  it('When the device a move names is gone, then retarget points it elsewhere once: a second mover naming the old target changes nothing, a finished move is left alone', async () => {
    const { poolId, deviceId, batchId, jobs } = await part(1);
    const id = jobs[0]!.messageId;
    await moves.begin(poolId, { messageId: id, from: deviceId, to: 'dev-b', batchId, reason: 'restricted' });
    expect(await moves.retarget(poolId, id, 'dev-b', 'dev-c')).to.equal(true);
    // A second mover that read the journal before the change still names dev-b: refused.
    expect(await moves.retarget(poolId, id, 'dev-b', 'dev-d')).to.equal(false);
    expect(await moves.unfinished(poolId)).to.deep.equal([
      { messageId: id, from: deviceId, to: 'dev-c', batchId, reason: 'restricted' },
    ]);
    // Begun again (a repeat), it keeps the new target.
    expect(
      (await moves.begin(poolId, { messageId: id, from: deviceId, to: 'dev-e', batchId, reason: 'x' })).to,
    ).to.equal('dev-c');
    await moves.finish(poolId, id);
    expect(await moves.retarget(poolId, id, 'dev-c', 'dev-d')).to.equal(false);
    expect(await moves.unfinished(poolId)).to.deep.equal([]);
  });

  it('When a pooled batch is recorded and a move done, then the whole batch sums its parts, the message belongs to its new device and its recipient sticks there', async () => {
    const a = await part(2);
    const poolId = a.poolId;
    const ids = a.jobs.map((j) => j.messageId);
    await pools.record(poolId, a.batchId, {
      createdAt: new Date(),
      shares: new Map([[a.deviceId, ids]]),
      sticky: new Map(a.jobs.map((j) => [j.to, a.deviceId])),
    });
    expect((await pools.get(poolId, a.batchId))!.total).to.equal(2);
    expect(await pools.owner(poolId, ids[0]!)).to.equal(a.deviceId);
    // The move of the first message to device b (its part there accepted as the API would).
    expect(await moves.release(a.jobs[0]!, 'pool-dev-b')).to.equal('released');
    const m = redis.multi();
    batches.stage(m, 'pool-dev-b', a.batchId, 1);
    await m.exec();
    await pools.moved(poolId, a.batchId, a.deviceId, 'pool-dev-b', [
      { messageId: ids[0]!, recipient: a.jobs[0]!.to },
    ]);
    const batch = (await pools.get(poolId, a.batchId))!;
    expect(batch.total).to.equal(2);
    expect(batch.moved).to.equal(1);
    expect(batch.devices.map((d) => [d.deviceId, d.total])).to.deep.equal([
      [a.deviceId, 1],
      ['pool-dev-b', 1],
    ]);
    expect(await pools.owner(poolId, ids[0]!)).to.equal('pool-dev-b');
    expect(await pools.stickyDevices(poolId, [a.jobs[0]!.to, a.jobs[1]!.to])).to.deep.equal([
      'pool-dev-b',
      a.deviceId,
    ]);
    expect(await pools.share(poolId, a.batchId, a.deviceId, 10)).to.deep.equal([ids[1]]);
  });
});
