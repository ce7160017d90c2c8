import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { Job, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { PRIORITY, keys, newMessageId, newPlatformMessageId, type SendJobData } from '@mgw/contracts';
import { jobScriptSources, openSendQueue, type SendQueue } from '@mgw/store';
import { RecordedWrites, runAcceptScript } from '../src/accept/accept-script.js';
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
    const sources = await jobScriptSources(queue);
    jobs = new BullJobs(queue, Object.fromEntries(Object.entries(sources).map(([k, v]) => [k, v.name])));
  });
  after(async () => {
    await queue.obliterate({ force: true });
    await redis.del(
      keys.session(deviceId),
      keys.deviceQueue(deviceId),
      keys.messageIndex(deviceId),
      keys.messageSeq(deviceId),
    );
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

  it("When jobs are added by the accept script (BullMQ's own scripts inside it), then BullMQ reads them as its own and a Worker processes them", async () => {
    await redis.hset(keys.session(deviceId), 'status', 'connected');
    const job = (d: SendJobData, priority: number, state: string, delay?: number) =>
      [d, options(d, priority, delay), state] as const;
    const scheduled = data({ sendAt: Date.now() + 3_600_000 });
    const made = [
      job(data(), PRIORITY.send, 'prioritized'),
      job(data({ batchId: newMessageId() }), PRIORITY.send, 'prioritized'),
      job(data(), 0, 'waiting'),
      job(scheduled, PRIORITY.send, 'delayed', 3_600_000),
    ];
    const writes = new RecordedWrites();
    const jobKeys = new Map<string, readonly string[]>();
    for (const [d, opts] of made) {
      const { plain, keyCount, args } = jobs.command(d.kind, d, opts);
      jobKeys.set(plain, args.slice(0, keyCount) as string[]);
      writes.job(plain, d.messageId, args.slice(keyCount));
    }
    const reply = await runAcceptScript(redis, queue, {
      deviceId,
      linkGeneration: 0,
      quota: { maxQueuedMessages: 100, maxQueuedBytes: 1000 },
      rateLimit: { limit: 0, windowMs: 0 },
      indexRetentionSeconds: 60,
      jobKeys,
      requests: [{ messages: made.length, bytes: 0, writes }],
    });
    expect(reply.requests.map((r) => r.verdict)).to.deep.equal([0]);
    for (const [d, opts, state] of made) {
      const added = await queue.getJob(d.messageId);
      expect(added?.data).to.deep.equal(d);
      expect(added?.opts).to.deep.include({ priority: opts.priority, attempts: 5 });
      expect(await added?.getState()).to.equal(state);
    }
    const due = made.filter(([, , state]) => state !== 'delayed').map(([d]) => d.messageId);
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
      for (let i = 0; i < 200 && seen.length < due.length; i++) await new Promise((r) => setTimeout(r, 25));
    } finally {
      await worker.close();
    }
    expect(seen.map((d) => d.messageId).sort()).to.deep.equal(due.sort());
  });
});
