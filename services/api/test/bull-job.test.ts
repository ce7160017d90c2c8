import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { Job, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { PRIORITY, newMessageId, newPlatformMessageId, type SendJobData } from '@mgw/contracts';
import { adoptJobScripts, openSendQueue, type SendQueue } from '@mgw/store';
import { BullJobs, type SendJobOptions } from '../src/accept/bull-job.js';

/**
 * The accept path adds send jobs without BullMQ's `Job` objects (`BullJobs`): what it queues must
 * be exactly what `new Job(...).addJob(tx)` would — the same script, keys and packed arguments —
 * so BullMQ workers read the jobs unchanged.
 */
describe('send jobs built without BullMQ Job objects', () => {
  let redis: Redis;
  let bullRedis: Redis;
  let queue: SendQueue;
  let jobs: BullJobs;
  const deviceId = `bulljob-${randomUUID().slice(0, 8)}`;

  before(async () => {
    redis = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: null });
    bullRedis = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: null });
    queue = openSendQueue(bullRedis, deviceId);
    jobs = new BullJobs(queue, await adoptJobScripts(redis, queue));
  });
  after(async () => {
    await queue.obliterate({ force: true });
    await queue.close();
    await Promise.all([redis.quit(), bullRedis.quit()]);
  });

  function data(extra: Partial<SendJobData> = {}): SendJobData {
    return {
      kind: 'send',
      messageId: newMessageId(),
      platformMessageId: newPlatformMessageId(),
      deviceId,
      to: '15551234567',
      contentId: newMessageId(),
      linkGeneration: 3,
      enqueuedAt: Date.now(),
      ...extra,
    };
  }
  function options(d: SendJobData, priority: number, delay?: number): SendJobOptions {
    return {
      jobId: d.messageId,
      priority,
      ...(delay !== undefined ? { delay } : {}),
      attempts: 5,
      backoff: { type: 'exponential', delay: 2000 },
      removeOnComplete: { age: 3600 },
      removeOnFail: { age: 604_800 },
    };
  }

  /** What BullMQ's own `Job.addJob` queues on a transaction, at the time `at`. */
  async function bullmqCommand(d: SendJobData, opts: SendJobOptions, at: number) {
    const queued: { script: string; args: unknown[] }[] = [];
    const tx = {
      runCommand(script: string, args: unknown[]) {
        queued.push({ script, args });
        return tx;
      },
    };
    const realNow = Date.now;
    Date.now = () => at;
    let job: Job;
    try {
      job = new Job(queue, d.kind, d, opts, d.messageId);
    } finally {
      Date.now = realNow;
    }
    await job.addJob(tx as never);
    expect(queued).to.have.length(1);
    return queued[0]!;
  }

  const shapes: [string, () => [SendJobData, SendJobOptions]][] = [
    ['a /send job (prioritized)', () => ((d) => [d, options(d, PRIORITY.send)])(data())],
    [
      'a list job with a batch id',
      () => ((d) => [d, options(d, PRIORITY.send)])(data({ batchId: newMessageId() })),
    ],
    [
      'an OTP job with an expiry',
      () => ((d) => [d, options(d, PRIORITY.otp)])(data({ kind: 'otp', expiresAt: Date.now() + 60_000 })),
    ],
    [
      'a scheduled job (delayed)',
      () => ((d) => [d, options(d, PRIORITY.send, 3_600_000)])(data({ sendAt: Date.now() + 3_600_000 })),
    ],
    ['a job without priority (standard)', () => ((d) => [d, options(d, 0)])(data())],
    ['a job with a zero delay', () => ((d) => [d, options(d, PRIORITY.send, 0)])(data())],
  ];
  for (const [what, shape] of shapes) {
    it(`When ${what} is built, then its script, keys and packed arguments are exactly Job.addJob's`, async () => {
      const [d, opts] = shape();
      const at = Date.now();
      const ours = jobs.command(d.kind, d, opts, at);
      const theirs = await bullmqCommand(d, opts, at);
      expect(ours.script).to.equal(theirs.script);
      expect(ours.args).to.deep.equal(theirs.args);
    });
  }

  it('When jobs are added this way in a transaction, then BullMQ reads them as its own and a Worker processes them', async () => {
    const made = [data(), data({ batchId: newMessageId() })];
    const tx = redis.multi();
    for (const d of made) jobs.add(tx, d.kind, d, options(d, PRIORITY.send));
    const replies = await tx.exec();
    expect(replies?.every(([err]) => err === null)).to.equal(true);
    for (const d of made) {
      const job = await queue.getJob(d.messageId);
      expect(job?.data).to.deep.equal(d);
      expect(job?.opts).to.deep.include({ priority: PRIORITY.send, attempts: 5 });
      expect(await job?.getState()).to.equal('prioritized');
    }
    const seen: SendJobData[] = [];
    const worker = new Worker<SendJobData>(
      queue.name,
      async (job) => {
        seen.push(job.data);
        return { ok: true };
      },
      { connection: bullRedis.duplicate(), prefix: queue.opts.prefix! },
    );
    try {
      for (let i = 0; i < 200 && seen.length < made.length; i++) await new Promise((r) => setTimeout(r, 25));
    } finally {
      await worker.close();
    }
    expect(seen.map((d) => d.messageId).sort()).to.deep.equal(made.map((d) => d.messageId).sort());
  });
});
