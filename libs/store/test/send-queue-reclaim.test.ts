import { expect } from 'chai';
import { Redis } from 'ioredis';
import { Worker, type Job } from 'bullmq';
import { BULL_PREFIX, sendQueueName } from '@mgw/contracts';
import { waitFor } from '@mgw/testing';
import { openSendQueue, reclaimActiveJobs, type SendQueue } from '../src/index.js';

describe("store: a new holder takes back the jobs a killed holder left active (real Redis, BullMQ's workers)", () => {
  let redis: Redis;
  const queues: SendQueue[] = [];
  const workers: Worker[] = [];
  before(() => {
    redis = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: null });
  });
  after(async () => {
    await Promise.all(workers.map((w) => w.close(true)));
    await Promise.all(queues.map((q) => q.obliterate({ force: true }).then(() => q.close())));
    await redis.quit();
  });

  /** A worker with the sender's stall settings, except locks long enough to outlast the test. */
  function worker(deviceId: string, process: (job: Job, token?: string) => Promise<unknown>) {
    const w = new Worker(sendQueueName(deviceId), process, {
      connection: redis,
      prefix: BULL_PREFIX,
      autorun: false,
      concurrency: 2,
      lockDuration: 60_000,
      stalledInterval: 60_000,
      maxStalledCount: 3,
    });
    workers.push(w);
    return w;
  }

  it('When the holder dies with jobs active, then the next worker sends them at once (not after their 60 s locks), counted as a stall, and the dead holder cannot complete them', async () => {
    const deviceId = `rc-${Math.random().toString(36).slice(2, 8)}`;
    const queue = openSendQueue(redis, deviceId);
    queues.push(queue);
    await queue.addBulk(
      ['a', 'b', 'c'].map((id) => ({ name: 'send', data: {} as never, opts: { jobId: id } })),
    );

    // The first holder takes two jobs and never finishes them (killed mid-send: its locks stay).
    const held: { job: Job; token?: string }[] = [];
    const dead = worker(deviceId, (job, token) => {
      held.push({ job, token });
      return new Promise(() => undefined);
    });
    void dead.run();
    await waitFor(() => held.length === 2, { what: 'two jobs active' });
    await dead.close(true);
    expect(await queue.getActiveCount()).to.equal(2);
    expect(await redis.pttl(`${queue.toKey(held[0]!.job.id!)}:lock`)).to.be.above(30_000);

    expect(await reclaimActiveJobs(redis, queue)).to.equal(2);
    const done: string[] = [];
    void worker(deviceId, async (job) => {
      done.push(job.id!);
      return 'sent';
    }).run();
    await waitFor(async () => (await queue.getCompletedCount()) === 3, {
      timeoutMs: 10_000,
      what: 'every job completed by the new holder',
    });
    expect([...done].sort()).to.deep.equal(['a', 'b', 'c']);
    for (const { job } of held) expect((await queue.getJob(job.id!))!.stalledCounter).to.equal(1);

    // The first holder, had it only been frozen, finds its locks gone: it completes nothing.
    const { job, token } = held[0]!;
    let refused: unknown;
    await job.moveToCompleted('late', token!, false).catch((err: unknown) => (refused = err));
    expect(refused, 'a late completion by the old holder').to.be.instanceOf(Error);
    expect((await queue.getJob(job.id!))!.returnvalue).to.equal('sent');
  });

  it('When no job is active, then nothing is taken back and a running stalled check keeps its throttle', async () => {
    const deviceId = `rc-${Math.random().toString(36).slice(2, 8)}`;
    const queue = openSendQueue(redis, deviceId);
    queues.push(queue);
    await redis.set(queue.keys['stalled-check']!, '1', 'PX', 60_000);
    expect(await reclaimActiveJobs(redis, queue)).to.equal(0);
    expect(await redis.exists(queue.keys['stalled-check']!)).to.equal(1);
  });
});
