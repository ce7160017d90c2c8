import { expect } from 'chai';
import { Queue, QueueEvents, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import {
  BULL_PREFIX,
  sendQueueName,
  newMessageId,
  newPlatformMessageId,
  type FailureReason,
  type MessageContent,
  type SendJobData,
  type SendJobResult,
} from '@mgw/contracts';
import { createLogger } from '@mgw/common';
import { createMetrics } from '@mgw/contracts';
import {
  ContactIdentities,
  ContentStore,
  InboundStore,
  MessageStore,
  MessageRevisions,
  MessageKindStore,
  Encryption,
  isOptedOut,
  type ContactAnswer,
} from '@mgw/store';
import type { DeviceSocket, MessageSender, OutgoingMessage } from '@mgw/messenger';
import type { Pacer } from '../src/send/pacing.js';
import { PermanentSendError } from '../src/send/send-errors.js';
import { DeviceRestriction } from '../src/device/device-restriction.js';
import { processSendJob } from '../src/send/send-job.js';
import { onSendJobFailed } from '../src/send/send-failure.js';
import { SendGate } from '../src/send/send-gate.js';

/** The real gate and restriction with no caps: these tests are about retries, not the policy. */
function policyDeps(redis: Redis, deviceId: string) {
  const metrics = createMetrics();
  const uncapped = {
    defaults: { dailyCap: 0, warmupCaps: [], firstContactCap: 0, otpReserve: 0, timeZone: 'UTC' },
    windowMs: 86_400_000,
  };
  return {
    gate: new SendGate(redis, deviceId, uncapped, metrics),
    restriction: new DeviceRestriction({
      redis,
      deviceId,
      conn: {
        fetchReachoutLock: async () => ({ active: false }),
        fetchNewChatCap: async () => ({ capped: false }),
      },
      backoff: { restrictionMs: 60_000, rateLimitMs: 60_000, failureRun: 0, failureMs: 60_000 },
      metrics,
      logger: createLogger({ level: 'silent', service: 'test' }),
      wakeHeld: async () => undefined,
    }),
    optedOut: (phone: string) => isOptedOut(redis, deviceId, phone),
    identities: new ContactIdentities(redis),
  };
}

/**
 * The send job's retry rules against a real Redis and real BullMQ, with the WhatsApp side faked:
 * a transient failure is retried with the same WhatsApp id, a permanent one is not, and the last
 * failed attempt leaves the record `failed` with a reason.
 */
describe('sender: send job retries and failure reasons (real Redis + BullMQ, fake socket)', () => {
  let redis: Redis;
  let bull: Redis;
  let store: MessageStore;
  let contents: ContentStore;
  const cleanups: (() => Promise<unknown>)[] = [];

  before(() => {
    redis = new Redis(process.env.REDIS_URL!);
    bull = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: null });
    store = new MessageStore(redis, 600);
    contents = new ContentStore(redis, Encryption.fromEnv(), 600);
  });
  afterEach(async () => {
    for (const c of cleanups.splice(0)) await c();
  });
  after(async () => {
    await bull.quit();
    await redis.quit();
  });

  /** A fresh device queue and one message with its `queued` record (the job is not added yet). */
  async function queuedMessage(prefix: string) {
    const deviceId = `${prefix}-${Math.random().toString(36).slice(2, 8)}`;
    const name = sendQueueName(deviceId);
    const queue = new Queue<SendJobData, SendJobResult>(name, { connection: bull, prefix: BULL_PREFIX });
    const data: SendJobData = {
      kind: 'send',
      messageId: newMessageId(),
      platformMessageId: newPlatformMessageId(),
      deviceId,
      to: '15550001111',
      contentId: newMessageId(),
      linkGeneration: 0,
      enqueuedAt: Date.now(),
    };
    const multi = redis.multi();
    contents.stage(multi, deviceId, data.contentId, { text: 'hi' }, 1);
    await multi.exec();
    return { deviceId, name, queue, data };
  }

  async function run(opts: {
    send: (m: OutgoingMessage, call: number) => Promise<void>;
    lookup?: () => Promise<string | null>;
    /** What the device's contact cache knows of the recipient. */
    known?: ContactAnswer;
    retired?: FailureReason;
    retiredSignal?: AbortSignal;
    attempts: number;
    /** The device's current link generation (the job is accepted for generation 0). */
    linkGeneration?: number;
    content?: MessageContent;
    recipients?: number;
    fetchAttachment?: (url: string) => Promise<Buffer>;
    /** The request is a batch still being accepted: held for this long (ms), or a hold already over. */
    held?: number | 'expired';
  }) {
    const deviceId = `job-${Math.random().toString(36).slice(2, 8)}`;
    const name = sendQueueName(deviceId);
    const sends: OutgoingMessage[] = [];
    const sender = {
      known: async () => opts.known,
      prefetchKeys: () => undefined,
      lookup: opts.lookup ?? (async () => '15550001111@s.whatsapp.net'),
      send: async (m: OutgoingMessage) => {
        sends.push(m);
        await opts.send(m, sends.length);
      },
    } as unknown as MessageSender;
    const worker = new Worker<SendJobData, SendJobResult>(
      name,
      (job, token) =>
        processSendJob(
          job,
          {
            deviceId,
            messages: store,
            inbound: new InboundStore(redis, Encryption.fromEnv(), 600),
            contents,
            revisions: new MessageRevisions(redis, Encryption.fromEnv(), 600),
            kinds: new MessageKindStore(redis, Encryption.fromEnv(), 600),
            fetchAttachment: opts.fetchAttachment ?? (async () => Buffer.alloc(0)),
            media: { bytes: async () => undefined },
            conn: { waitForOpen: async () => true } as unknown as DeviceSocket,
            sender,
            pacer: {
              wait: async () => undefined,
              typing: async () => false,
              gapMs: async () => 0,
            } as unknown as Pacer,
            ...policyDeps(redis, deviceId),
            metrics: createMetrics(),
            logger: createLogger({ level: 'silent', service: 'test' }),
            openWaitMs: 1000,
            retiredReason: () => opts.retired,
            retired: opts.retiredSignal ?? new AbortController().signal,
            linkGeneration: () => opts.linkGeneration ?? 0,
            handingOver: () => false,
            unrecorded: new Map(),
          },
          token,
        ),
      { connection: bull, prefix: BULL_PREFIX },
    );
    const queue = new Queue<SendJobData, SendJobResult>(name, { connection: bull, prefix: BULL_PREFIX });
    const events = new QueueEvents(name, { connection: bull.duplicate(), prefix: BULL_PREFIX });
    await events.waitUntilReady();
    cleanups.push(async () => {
      await worker.close();
      await events.close();
      await queue.obliterate({ force: true });
      await queue.close();
    });
    const contentId = newMessageId();
    const all: SendJobData[] = Array.from({ length: opts.recipients ?? 1 }, (_, i) => ({
      kind: 'send',
      messageId: newMessageId(),
      platformMessageId: newPlatformMessageId(),
      deviceId,
      to: String(15550001111 + i),
      contentId,
      linkGeneration: 0,
      enqueuedAt: Date.now(),
    }));
    const data = all[0]!;
    const multi = redis.multi();
    const heldUntil =
      opts.held === undefined ? undefined : opts.held === 'expired' ? Date.now() - 1 : Date.now() + 60_000;
    contents.stage(
      multi,
      deviceId,
      contentId,
      opts.content ?? { text: 'hi' },
      all.length,
      undefined,
      heldUntil,
    );
    await multi.exec();
    let releasedAt: number | undefined;
    if (typeof opts.held === 'number') {
      setTimeout(() => {
        const release = redis.multi();
        contents.stageReady(release, deviceId, contentId);
        void release.exec().then(() => (releasedAt = Date.now()));
      }, opts.held);
    }
    const outcomes = await Promise.all(
      all.map(async (d) => {
        const job: Job<SendJobData, SendJobResult> = await queue.add('send', d, {
          jobId: d.messageId,
          attempts: opts.attempts,
          backoff: { type: 'fixed', delay: 20 },
        });
        return job.waitUntilFinished(events, 10_000).then(
          (value: SendJobResult) => ({ value }),
          (err: Error) => ({ error: err.message }),
        );
      }),
    );
    return {
      data,
      sends,
      releasedAt,
      outcome: outcomes[0]!,
      outcomes,
      record: (await store.get(data.deviceId, data.messageId))!,
      job: (await queue.getJob(data.messageId))!,
    };
  }

  it('When its batch is still being accepted (held), then a message waits unsent, steps aside after a moment without spending an attempt, and goes out once the hold is cleared', async () => {
    // Held 3 s: past the 2 s a message waits in place, so it also goes back to the queue once.
    const r = await run({ attempts: 1, recipients: 2, held: 3000, send: async () => undefined });
    expect(r.outcomes.every((o) => 'value' in o)).to.equal(true);
    expect(r.sends).to.have.length(2);
    expect(r.record.status).to.equal('sent');
    expect(Date.parse(r.record.sentAt!)).to.be.at.least(r.releasedAt! - 50);
  });

  it('When a held batch was never completed (its hold is over: the API died mid-batch), then its messages fail enqueue_failed and are never sent', async () => {
    const r = await run({ attempts: 3, recipients: 2, held: 'expired', send: async () => undefined });
    expect(r.sends).to.have.length(0);
    expect(r.outcomes).to.deep.equal([{ error: 'enqueue_failed' }, { error: 'enqueue_failed' }]);
    expect(r.record).to.include({ status: 'failed', error: 'enqueue_failed' });
  });

  it('When an attempt fails transiently, then it is retried with the same WhatsApp id and the record ends sent', async () => {
    const r = await run({
      attempts: 3,
      send: async (_m, call) => {
        if (call === 1) throw new Error('socket closed under the write');
      },
    });
    expect(r.sends.map((m) => m.platformMessageId)).to.deep.equal([
      r.data.platformMessageId,
      r.data.platformMessageId,
    ]);
    expect(r.outcome).to.have.property('value');
    expect(r.record.status).to.equal('sent');
    expect((r.outcome as { value: SendJobResult }).value).to.deep.equal({
      messageId: r.data.messageId,
      platformMessageId: r.data.platformMessageId,
      phone: '15550001111',
      sentAt: r.record.sentAt,
    });
  });

  it('When every attempt fails transiently, then the last one marks the record failed with send_failed', async () => {
    const r = await run({
      attempts: 2,
      send: async () => {
        throw new Error('no ack');
      },
    });
    expect(r.sends).to.have.length(2);
    expect(r.outcome).to.deep.equal({ error: 'no ack' });
    expect(r.record).to.include({ status: 'failed', error: 'send_failed' });
  });

  it('When the number is not on WhatsApp, then nothing is sent, there is no retry and the reason is recorded', async () => {
    const r = await run({ attempts: 5, lookup: async () => null, send: async () => undefined });
    expect(r.sends).to.have.length(0);
    expect(r.outcome).to.deep.equal({ error: 'not_on_whatsapp' });
    expect(r.job.attemptsMade).to.equal(1);
    expect(r.record).to.include({ status: 'failed', error: 'not_on_whatsapp' });
  });

  it('When the contact cache knows the number is not on WhatsApp, then it fails not_on_whatsapp at once, without a lookup', async () => {
    let lookups = 0;
    const r = await run({
      attempts: 5,
      known: { onWhatsApp: false },
      lookup: async () => {
        lookups++;
        return '15550001111@s.whatsapp.net';
      },
      send: async () => undefined,
    });
    expect(lookups).to.equal(0);
    expect(r.sends).to.have.length(0);
    expect(r.job.attemptsMade).to.equal(1);
    expect(r.record).to.include({ status: 'failed', error: 'not_on_whatsapp' });
  });

  it('When the device was logged out, then waiting jobs fail at once with logged_out', async () => {
    const r = await run({ attempts: 5, retired: 'logged_out', send: async () => undefined });
    expect(r.sends).to.have.length(0);
    expect(r.outcome).to.deep.equal({ error: 'logged_out' });
    expect(r.record).to.include({ status: 'failed', error: 'logged_out' });
  });

  it('When a message was accepted for an earlier link of the device, then it fails logged_out and is never sent', async () => {
    const r = await run({ attempts: 5, linkGeneration: 1, send: async () => undefined });
    expect(r.sends).to.have.length(0);
    expect(r.outcome).to.deep.equal({ error: 'logged_out' });
    expect(r.record).to.include({ status: 'failed', error: 'logged_out' });
  });

  it('When the device is retired while a send hangs on the dead socket, then the job fails logged_out at once, not after retries', async () => {
    const retiring = new AbortController();
    const started = Date.now();
    const r = await run({
      attempts: 5,
      retiredSignal: retiring.signal,
      send: async () => {
        setTimeout(() => retiring.abort(), 100);
        await new Promise((resolve) => setTimeout(resolve, 60_000).unref());
      },
    });
    expect(r.outcome).to.deep.equal({ error: 'logged_out' });
    expect(r.record).to.include({ status: 'failed', error: 'logged_out' });
    expect(r.job.attemptsMade).to.equal(1);
    // Not the hung send's 60 s: quiet: 110 ms.
    expect(Date.now() - started).to.be.below(10_000);
  });

  it("When a request's attachment URL fails for one recipient, then the others fail with the same reason without fetching it again", async () => {
    let fetches = 0;
    const r = await run({
      attempts: 3,
      recipients: 5,
      content: { attachment: { type: 'document', source: { url: 'https://files.example/a.pdf' } } },
      fetchAttachment: async () => {
        fetches += 1;
        throw new PermanentSendError('attachment_url_not_allowed', 'private address');
      },
      // a real MessageSender loads the media through `load` once per request
      send: async (m) => void (await m.media?.load()),
    });
    expect(r.outcomes).to.deep.equal(
      Array.from({ length: 5 }, () => ({ error: 'attachment_url_not_allowed' })),
    );
    expect(fetches).to.equal(1);
  });

  it('When BullMQ fails a job that stalled more than allowed (the processor never runs), then the failed handler marks the record failed', async () => {
    const { name, queue, data } = await queuedMessage('stall');
    await queue.add('send', data, { jobId: data.messageId, attempts: 5 });
    // What BullMQ's stalled check leaves on a job past maxStalledCount: a deferred failure that the
    // next worker applies without calling the processor.
    await redis.hset(
      `${BULL_PREFIX}:${name}:${data.messageId}`,
      'defa',
      'job stalled more than allowable limit',
    );
    let processed = 0;
    const logger = createLogger({ level: 'silent', service: 'test' });
    const worker = new Worker<SendJobData, SendJobResult>(
      name,
      async () => {
        processed += 1;
        throw new Error('the processor must not run');
      },
      { connection: bull, prefix: BULL_PREFIX },
    );
    worker.on(
      'failed',
      (job, err) => void onSendJobFailed(job, err, { messages: store, metrics: createMetrics(), logger }),
    );
    cleanups.push(async () => {
      await worker.close();
      await queue.obliterate({ force: true });
      await queue.close();
    });
    const deadline = Date.now() + 10_000;
    while ((await store.get(data.deviceId, data.messageId))?.status === 'queued' && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(processed).to.equal(0);
    expect(await queue.getJobState(data.messageId)).to.equal('failed');
    expect(await store.get(data.deviceId, data.messageId)).to.include({
      status: 'failed',
      error: 'send_failed',
    });
  });

  it('When the device is handed over while a job waits for the socket, then the job goes back to the queue without spending an attempt', async () => {
    const { deviceId, name, queue, data } = await queuedMessage('handover');
    let runs = 0;
    const worker = new Worker<SendJobData, SendJobResult>(
      name,
      (job, token) => {
        runs += 1;
        return processSendJob(
          job,
          {
            deviceId,
            messages: store,
            inbound: new InboundStore(redis, Encryption.fromEnv(), 600),
            contents,
            revisions: new MessageRevisions(redis, Encryption.fromEnv(), 600),
            kinds: new MessageKindStore(redis, Encryption.fromEnv(), 600),
            fetchAttachment: async () => Buffer.alloc(0),
            media: { bytes: async () => undefined },
            // The socket is reconnecting and the hand-over woke the waiter: not open.
            conn: { waitForOpen: async () => false } as unknown as DeviceSocket,
            sender: {
              known: async () => undefined,
              prefetchKeys: () => undefined,
            } as unknown as MessageSender,
            pacer: {
              wait: async () => undefined,
              typing: async () => false,
              gapMs: async () => 0,
            } as unknown as Pacer,
            ...policyDeps(redis, deviceId),
            metrics: createMetrics(),
            logger: createLogger({ level: 'silent', service: 'test' }),
            openWaitMs: 1000,
            retiredReason: () => undefined,
            retired: new AbortController().signal,
            linkGeneration: () => 0,
            handingOver: () => true,
            unrecorded: new Map(),
          },
          token,
        );
      },
      { connection: bull, prefix: BULL_PREFIX },
    );
    cleanups.push(async () => {
      await worker.close();
      await queue.obliterate({ force: true });
      await queue.close();
    });
    await queue.add('send', data, { jobId: data.messageId, attempts: 1 });
    const deadline = Date.now() + 10_000;
    while (runs === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await worker.close();
    const job = (await queue.getJob(data.messageId))!;
    expect(runs).to.be.at.least(1);
    expect(['delayed', 'waiting']).to.include(await queue.getJobState(data.messageId));
    expect(job.attemptsMade).to.equal(0);
    expect(await store.get(data.deviceId, data.messageId)).to.include({ status: 'queued' });
  });
});
