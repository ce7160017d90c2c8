import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { PRIORITY, keys, newMessageId, type SendJobData } from '@mgw/contracts';
import { Blocklist, ContactIdentities, type BullJobs, type SendQueue } from '@mgw/store';
import { openTestSendQueue, sendJobData, sendJobOptions } from '@mgw/testing';
import { RecordedWrites, VERDICT, runAcceptScript } from '../src/enqueue/accept-script.js';

/**
 * The accept script runs BullMQ's own job-adding scripts inside it (spliced by @mgw/store's BullMQ
 * door, whose own test holds the packing and the scripts to BullMQ's): the jobs it adds must be
 * read by BullMQ as its own and processed by a Worker.
 */
describe('send jobs added by the accept script', () => {
  let redis: Redis;
  let bullRedis: Redis;
  let queue: SendQueue;
  let jobs: BullJobs;
  const deviceId = `acceptjob-${randomUUID().slice(0, 8)}`;

  let close: () => Promise<void>;

  before(async () => ({ redis, bullRedis, queue, jobs, close } = await openTestSendQueue(deviceId)));
  after(async () => {
    await redis.del(
      keys.session(deviceId),
      keys.deviceQueue(deviceId),
      keys.messageIndex(deviceId),
      keys.messageSeq(deviceId),
    );
    await close();
  });

  const data = (extra: Partial<SendJobData> = {}) => sendJobData(deviceId, extra);

  it("When jobs are added by the accept script (BullMQ's own scripts inside it), then BullMQ reads them as its own and a Worker processes them", async () => {
    await redis.hset(keys.session(deviceId), 'status', 'connected');
    const job = (d: SendJobData, priority: number, state: string, delay?: number) =>
      [d, sendJobOptions(d, priority, delay), state] as const;
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

/**
 * A single recipient is looked for on the account's blocklist by the accept call that would write
 * it (no round trip of its own before it): the request is refused there, by either identity its
 * contact has in the device's map, after its rate-limit hit is counted (over the limit it is that
 * refusal, as when the API asked the blocklist itself), and nothing of it is written.
 */
describe("the accept script's blocklist check", () => {
  let redis: Redis;
  let queue: SendQueue;
  let close: () => Promise<void>;
  const deviceId = `acceptblock-${randomUUID().slice(0, 8)}`;
  const probe = (name: string) => `${keys.session(deviceId)}:probe-${name}`;

  before(async () => ({ redis, queue, close } = await openTestSendQueue(deviceId)));
  after(async () => {
    await redis.del(
      keys.session(deviceId),
      keys.deviceQueue(deviceId),
      keys.blocklist(deviceId),
      keys.contactIdentities(deviceId),
      keys.sendRateLimit(deviceId, 'tok'),
      ...['phone', 'lid', 'other', 'unchecked', 'over'].map(probe),
    );
    await close();
  });

  it('When requests name their recipient for the check, then the blocked ones (by phone or LID) are refused with nothing written, after their hit is counted', async () => {
    await redis.hset(keys.session(deviceId), 'status', 'connected');
    await new ContactIdentities(redis).learn(deviceId, [{ phone: '15557654321', lid: '998877665544@lid' }]);
    await new Blocklist(redis).replace(deviceId, ['998877665544@lid']);
    const counter = keys.sendRateLimit(deviceId, 'tok');
    const request = (name: string, blocklistCheck?: string) => ({
      counter,
      messages: 1,
      bytes: 10,
      check: { messages: 1, bytes: 10 },
      ...(blocklistCheck !== undefined ? { blocklistCheck } : {}),
      writes: new RecordedWrites().hset(probe(name), { written: '1' }),
    });
    const reply = await runAcceptScript(redis, queue, {
      deviceId,
      linkGeneration: 0,
      quota: { maxQueuedMessages: 100, maxQueuedBytes: 1000 },
      rateLimit: { limit: 4, windowMs: 60_000 },
      indexRetentionSeconds: 60,
      jobKeys: new Map(),
      requests: [
        // Blocked by its LID: the blocklist names the contact by LID only.
        request('phone', '15557654321'),
        request('lid', '998877665544@lid'),
        request('other', '15550001111'),
        // Not checked (a list's recipient, a group): admitted whatever the blocklist holds.
        request('unchecked'),
        // The fifth hit is over the limit of 4: that is its refusal, blocked or not.
        request('over', '15557654321'),
      ],
    });
    expect(reply.requests.map((r) => r.verdict)).to.deep.equal([
      VERDICT.recipientBlocked,
      VERDICT.recipientBlocked,
      VERDICT.admitted,
      VERDICT.admitted,
      VERDICT.rateLimited,
    ]);
    expect(reply.requests.map((r) => r.hit?.total)).to.deep.equal([1, 2, 3, 4, 5]);
    const written = async (name: string) => (await redis.exists(probe(name))) === 1;
    expect(await Promise.all(['phone', 'lid', 'other', 'unchecked', 'over'].map(written))).to.deep.equal([
      false,
      false,
      true,
      true,
      false,
    ]);
    expect(reply.queued, 'only the admitted ones counted').to.deep.equal({ messages: 2, bytes: 20 });
  });
});

describe("the accept script's idempotent requests", () => {
  let redis: Redis;
  let queue: SendQueue;
  let jobs: BullJobs;
  let close: () => Promise<void>;
  const deviceId = `acceptonce-${randomUUID().slice(0, 8)}`;
  const counter = () => keys.sendRateLimit(deviceId, 'tok');

  before(async () => ({ redis, queue, jobs, close } = await openTestSendQueue(deviceId)));
  after(async () => {
    await redis.del(
      keys.session(deviceId),
      keys.deviceQueue(deviceId),
      keys.messageIndex(deviceId),
      keys.messageSeq(deviceId),
      counter(),
    );
    await close();
  });

  /** One request of one job, idempotent on its message id. */
  function request(d: SendJobData) {
    const writes = new RecordedWrites();
    const jobKeys = new Map<string, readonly string[]>();
    const { plain, keyCount, args } = jobs.command(d.kind, d, sendJobOptions(d, PRIORITY.send));
    jobKeys.set(plain, args.slice(0, keyCount) as string[]);
    writes.job(plain, d.messageId, args.slice(keyCount));
    return { call: { counter: counter(), messages: 1, bytes: 10, acceptedIf: d.messageId, writes }, jobKeys };
  }

  const run = (r: ReturnType<typeof request>) =>
    runAcceptScript(redis, queue, {
      deviceId,
      linkGeneration: 0,
      quota: { maxQueuedMessages: 100, maxQueuedBytes: 1000 },
      rateLimit: { limit: 10, windowMs: 60_000 },
      indexRetentionSeconds: 60,
      jobKeys: r.jobKeys,
      requests: [r.call],
    });

  it('When an idempotent request is run again (its first answer was lost), then it is found accepted before: nothing counted, queued or written twice', async () => {
    await redis.hset(keys.session(deviceId), 'status', 'connected');
    const d = sendJobData(deviceId);
    const first = await run(request(d));
    expect(first.requests[0]!.verdict).to.equal(VERDICT.admitted);
    const again = await run(request(d));
    expect(again.requests[0]!.verdict).to.equal(VERDICT.acceptedBefore);
    expect(again.requests[0]!.hit, 'no hit counted for it').to.equal(undefined);
    expect(again.queued).to.deep.equal({ messages: 1, bytes: 10 });
    expect(await redis.zcard(keys.messageIndex(deviceId))).to.equal(1);
    expect(await queue.getJobCounts('prioritized')).to.deep.equal({ prioritized: 1 });
    // Another message is no repeat.
    expect((await run(request(sendJobData(deviceId)))).requests[0]!.verdict).to.equal(VERDICT.admitted);
  });
});
