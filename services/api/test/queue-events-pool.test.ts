import { expect } from 'chai';
import { Queue, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { closeRedis, createLogger, createRedis, waitForRedis } from '@mgw/common';
import { BULL_PREFIX } from '@mgw/contracts';
import { QueueEventsPool, waitForJob } from '../src/clients/queue-events-pool.js';

describe('QueueEventsPool and waitForJob', () => {
  let producer: Redis;
  let workerConnection: Redis;
  let queue: Queue;
  let pool: QueueEventsPool;
  const url = () => process.env.REDIS_URL!;

  beforeEach(async () => {
    producer = createRedis(url(), 'producer', 'test-pool');
    workerConnection = createRedis(url(), 'worker', 'test-pool-worker');
    await waitForRedis(producer);
    queue = new Queue(`pool-${Math.random().toString(36).slice(2)}`, {
      connection: producer,
      prefix: BULL_PREFIX,
    });
    pool = new QueueEventsPool(
      { url: url() },
      producer,
      createLogger({ level: 'silent', service: 'test' }),
      20,
    );
  });
  afterEach(async () => {
    await pool.close();
    await queue.obliterate({ force: true });
    await queue.close();
    await closeRedis(producer, workerConnection);
  });

  async function waitUntil(cond: () => boolean): Promise<void> {
    while (!cond()) await new Promise((r) => setTimeout(r, 10));
  }

  it('When a job completes or fails, then its result or reason is returned; when nobody works it, timeout', async () => {
    const worker = new Worker(
      queue.name,
      async (job) => {
        if (job.data.fail) throw new Error('boom');
        return { echoed: job.data.n };
      },
      { connection: workerConnection, prefix: BULL_PREFIX },
    );
    try {
      const ok = await pool.use(queue, async (events) =>
        waitForJob(queue, await queue.add('j', { n: 7 }), events, 5000),
      );
      const failed = await pool.use(queue, async (events) =>
        waitForJob(queue, await queue.add('j', { fail: true }), events, 5000),
      );
      expect(ok).to.deep.equal({ kind: 'completed', value: { echoed: 7 } });
      expect(failed).to.deep.equal({ kind: 'failed', reason: 'boom' });
    } finally {
      await worker.close();
    }
    const pending = await pool.use(queue, async (events) =>
      waitForJob(queue, await queue.add('j', { n: 1 }), events, 200),
    );
    expect(pending).to.deep.equal({ kind: 'timeout' });
  });

  it('When a QueueEvents has had no users for the idle time, then it is closed, and the next use opens a new one', async () => {
    await pool.use(queue, async () => undefined);
    expect(pool.size).to.equal(1);
    await waitUntil(() => pool.size === 0);

    const worker = new Worker(queue.name, async () => 'again', {
      connection: workerConnection,
      prefix: BULL_PREFIX,
    });
    try {
      const result = await pool.use(queue, async (events) =>
        waitForJob(queue, await queue.add('j', {}), events, 5000),
      );
      expect(result).to.deep.equal({ kind: 'completed', value: 'again' });
    } finally {
      await worker.close();
    }
  });

  it('When a QueueEvents is in use, then it is not closed however long the wait', async () => {
    let release!: () => void;
    const held = pool.use(queue, () => new Promise<void>((r) => (release = r)));
    await waitUntil(() => release !== undefined);
    await new Promise((r) => setTimeout(r, 60));
    expect(pool.size).to.equal(1);
    release();
    await held;
  });
});
