import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';

/**
 * patches/bullmq+6.7.0.patch: a Worker's dedicated blocking connection only waits (BZPOPMIN) and
 * gets none of BullMQ's Lua commands; its shared connection keeps them all. A sender holds one
 * Worker per device, so each set of commands defined there (an ioredis Script class per command)
 * was ~90 KiB of heap per linked account.
 */
describe('BullMQ: a worker’s blocking connection defines no Lua commands (patches/bullmq)', () => {
  it('When a worker runs on a shared connection, then its blocking duplicate has no BullMQ command, the shared one has them, and jobs still flow', async function () {
    this.timeout(20_000);
    const shared = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: null });
    const name = `patch-${randomUUID()}`;
    const queue = new Queue(name, { connection: shared });
    const done: string[] = [];
    const worker = new Worker(
      name,
      async (job) => {
        done.push(job.name);
        return job.data as unknown;
      },
      { connection: shared, autorun: true, drainDelay: 1 },
    );
    try {
      await worker.waitUntilReady();
      const commandsOf = (client: object) =>
        Object.keys(Object.getPrototypeOf(client) as object)
          .concat(Object.keys(client))
          .filter((k) => /:\d+\.\d+\.\d+$/.test(k));
      const backend = (worker as unknown as { backend: { blockingClient: Promise<object> } }).backend;
      const blocking = await backend.blockingClient;
      expect(blocking).to.not.equal(shared);
      expect(commandsOf(blocking)).to.deep.equal([]);
      expect(commandsOf(shared).length).to.be.greaterThan(50);
      expect(commandsOf(shared).some((k) => k.startsWith('moveToActive:'))).to.equal(true);

      await queue.add('one', { n: 1 });
      await queue.add('two', { n: 2 }, { delay: 200 });
      const deadline = Date.now() + 10_000;
      while (done.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(done).to.deep.equal(['one', 'two']);
    } finally {
      await worker.close();
      await queue.obliterate({ force: true });
      await queue.close();
      shared.disconnect();
    }
  });
});
