/**
 * Facts about BullMQ 6.7 on an ioredis Cluster that the gateway's Cluster mode relies on.
 * A queue touches many keys in one Lua script, so all of a queue's keys must share one slot.
 */
import { expect } from 'chai';
import { Job, Queue, QueueEvents, Worker } from 'bullmq';
import { Cluster } from 'ioredis';
import { keySlot, startRedisCluster, type ClusterHandle } from '../src/redis-cluster.js';

const PREFIX = 'mgw:bull';

async function failure(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a failure');
}

describe('BullMQ 6.7 on Redis Cluster', function () {
  this.timeout(30_000);
  let cluster: ClusterHandle;
  let client: Cluster;
  const closers: (() => Promise<unknown>)[] = [];
  // Workers and QueueEvents block: BullMQ duplicates the connection for them and wants null retries.
  // BullMQ does not close a connection it was given: each one is closed after its test.
  const connect = () => {
    const connection = new Cluster(cluster.seeds.split(','), {
      redisOptions: { maxRetriesPerRequest: null },
    });
    closers.push(async () => connection.disconnect());
    return connection;
  };
  const track = <T extends { close(): Promise<unknown> }>(x: T): T => (closers.push(() => x.close()), x);

  before(async () => {
    cluster = await startRedisCluster();
    client = new Cluster(cluster.seeds.split(','), { redisOptions: { maxRetriesPerRequest: null } });
  });
  afterEach(async () => {
    // Workers and QueueEvents first, then the connections they were given.
    for (const close of closers.splice(0).reverse()) await close();
    await cluster.flushAll();
  });
  after(async () => {
    client?.disconnect();
    await cluster?.stop();
  });

  it('When the queue name carries a hash tag (send-{dev1}), then add, priorities, delay, counts, remove and waitUntilFinished all work', async () => {
    const queue = track(new Queue('send-{dev1}', { connection: client, prefix: PREFIX }));
    const events = track(new QueueEvents('send-{dev1}', { connection: connect(), prefix: PREFIX }));
    await events.waitUntilReady();
    const low = await queue.add('low', {}, { priority: 9 });
    const high = await queue.add('high', {}, { priority: 1 });
    const later = await queue.add('later', {}, { delay: 300 });
    const gone = await queue.add('gone', {}, { priority: 5 });
    await gone.remove();
    expect(await queue.getJobCounts('prioritized', 'delayed')).to.deep.equal({ prioritized: 2, delayed: 1 });

    const order: string[] = [];
    track(
      new Worker('send-{dev1}', async (job) => (order.push(job.name), `${job.name} done`), {
        connection: connect(),
        prefix: PREFIX,
      }),
    );

    expect(await later.waitUntilFinished(events, 10_000)).to.equal('later done');
    expect(await low.waitUntilFinished(events, 1000)).to.equal('low done');
    expect(order.filter((name) => name !== 'later')).to.deep.equal(['high', 'low']);
    const ran = await Job.fromId(queue, later.id!);
    expect(ran!.processedOn! - later.timestamp).to.be.at.least(300);
    expect(await high.getState()).to.equal('completed');
    expect(await queue.getJobCounts('completed', 'prioritized', 'delayed')).to.deep.equal({
      completed: 3,
      prioritized: 0,
      delayed: 0,
    });
  });

  it('When jobs of a hash-tagged queue are added in bulk, paused, resumed and obliterated, then each call works', async () => {
    const queue = track(new Queue('send-{dev1}', { connection: client, prefix: PREFIX }));
    const jobs = await queue.addBulk(
      ['m1', 'm2'].map((jobId) => ({ name: 'text', data: {}, opts: { jobId } })),
    );
    expect(jobs.map((j) => j.id)).to.deep.equal(['m1', 'm2']);
    expect((await queue.getJob('m2'))?.id).to.equal('m2');
    await queue.pause();
    expect(await queue.isPaused()).to.equal(true);
    await queue.resume();
    await queue.obliterate({ force: true });
    expect(await queue.count()).to.equal(0);
    expect(await client.keys(`${PREFIX}:send-{dev1}:*`)).to.deep.equal([]);
  });

  it('When the queue name has no hash tag, then adding fails with CROSSSLOT and counting with a non-local key error', async () => {
    const queue = track(new Queue('send-dev1', { connection: client, prefix: PREFIX }));
    expect((await failure(queue.add('x', {}))).message).to.match(/^CROSSSLOT/);
    expect((await failure(queue.getJobCounts())).message).to.include('non local key');
  });

  it('When a queue name has braces, then BullMQ accepts it; only a colon is refused', () => {
    expect(() => new Queue('a:b', { connection: client })).to.throw('Queue name cannot contain :');
    expect(track(new Queue('send-{dev1}', { connection: client, prefix: PREFIX })).name).to.equal(
      'send-{dev1}',
    );
  });

  it('When queues are tagged by device, then they spread over the masters; with the documented prefix {mgw:bull} they all share one slot', async () => {
    const devices = Array.from({ length: 12 }, (_, i) => `dev${i}`);
    const byName = await Promise.all(devices.map((d) => cluster.masterForKey(`${PREFIX}:send-{${d}}:wait`)));
    expect(new Set(byName).size).to.equal(3);
    const byPrefix = devices.map((d) => keySlot(`{${PREFIX}}:send-${d}:wait`));
    expect(new Set(byPrefix)).to.deep.equal(new Set([keySlot(PREFIX)]));

    const queue = track(new Queue('send-dev1', { connection: client, prefix: `{${PREFIX}}` }));
    await queue.add('x', {});
    expect(await queue.count()).to.equal(1);
  });

  it('When our HSET and BullMQ job add share one MULTI and all keys carry {dev1}, then EXEC writes both and the job runs', async () => {
    const queue = track(new Queue('send-{dev1}', { connection: client, prefix: PREFIX }));
    const events = track(new QueueEvents('send-{dev1}', { connection: connect(), prefix: PREFIX }));
    await events.waitUntilReady();
    // BullMQ's own client: its MULTI has BullMQ's scripts and the runCommand Job.addJob calls.
    const multi = (await queue.getBackend().client).multi();
    multi.hset('mgw:{dev1}:msg:1', { status: 'queued' });
    const job = new Job(queue, 'text', { to: 'x' }, {}, 'msg1');
    await job.addJob(multi);
    const replies = await multi.exec();

    expect(replies).to.deep.equal([
      [null, 1],
      [null, 'msg1'],
    ]);
    track(new Worker('send-{dev1}', async () => 'sent', { connection: connect(), prefix: PREFIX }));
    expect(await job.waitUntilFinished(events, 10_000)).to.equal('sent');
    expect(await client.hget('mgw:{dev1}:msg:1', 'status')).to.equal('queued');
  });

  it('When the shared MULTI also holds a key of another slot, then EXEC fails and neither the record nor the job exists', async () => {
    const queue = track(new Queue('send-{dev1}', { connection: client, prefix: PREFIX }));
    const home = await cluster.masterForKey('{dev1}');
    const sameNode = await findKey(cluster, (port, key) => port === home && keySlot(key) !== keySlot('dev1'));
    const otherNode = await findKey(cluster, (port) => port !== home);
    const errors: string[] = [];
    for (const stray of [sameNode, otherNode]) {
      const multi = (await queue.getBackend().client).multi();
      multi.hset('mgw:{dev1}:msg:2', { status: 'queued' });
      multi.hset(stray, { status: 'queued' });
      await new Job(queue, 'text', {}, {}, 'msg2').addJob(multi);
      errors.push((await failure(multi.exec())).message);
      expect(await client.exists('mgw:{dev1}:msg:2')).to.equal(0);
      expect(await queue.getJob('msg2')).to.equal(undefined);
    }
    // Same master: Redis refuses the transaction; another master: ioredis refuses to send it.
    expect(errors).to.deep.equal([
      "CROSSSLOT Keys in request don't hash to the same slot",
      'All keys in the pipeline should belong to the same slots allocation group',
    ]);
  });

  it("When BullMQ's MULTI gets hset(key, field, value), then it writes the field's characters; only hset(key, {field: value}) is right", async () => {
    const queue = track(new Queue('send-{dev1}', { connection: client, prefix: PREFIX }));
    const multi = (await queue.getBackend().client).multi();
    (multi.hset as unknown as (...args: string[]) => unknown)('mgw:{dev1}:msg:3', 'status', 'queued');
    await multi.exec();
    expect(await client.hgetall('mgw:{dev1}:msg:3')).to.deep.equal({
      0: 's',
      1: 't',
      2: 'a',
      3: 't',
      4: 'u',
      5: 's',
    });
  });
});

async function findKey(cluster: ClusterHandle, ok: (port: number, key: string) => boolean): Promise<string> {
  for (let i = 0; i < 1000; i++) {
    const key = `mgw:{other${i}}:msg:1`;
    if (ok(await cluster.masterForKey(key), key)) return key;
  }
  throw new Error('no such key');
}
