import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { PRIORITY, keys, newMessageId, type SendJobData } from '@mgw/contracts';
import type { BullJobs, SendQueue } from '@mgw/store';
import { openTestSendQueue, sendJobData, sendJobOptions } from '@mgw/testing';
import { RecordedWrites, runAcceptScript } from '../src/accept/accept-script.js';
import { packForLua, type LuaPackable } from '../src/accept/lua-pack.js';

/**
 * The accept script gets its call as one MessagePack argument (`packForLua`), read in Redis by
 * `cmsgpack.unpack`, which knows no `bin` type: bytes go as strings. Every size class of every
 * type must come out in Lua as it went in.
 */
describe('the accept call, packed for Redis (packForLua)', () => {
  let redis: Redis;
  before(() => (redis = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: null })));
  after(async () => redis.quit());

  /** Lua flattens what it unpacked: numbers as `%.17g`, strings as their bytes, arrays as `[n` … `]`. */
  const FLATTEN = `
local out = {}
local function walk(v)
  if type(v) == 'table' then
    out[#out + 1] = '[' .. #v
    for _, item in ipairs(v) do walk(item) end
    out[#out + 1] = ']'
  elseif type(v) == 'number' then
    out[#out + 1] = string.format('%.17g', v)
  else
    out[#out + 1] = v
  end
end
walk(cmsgpack.unpack(ARGV[1]))
return out`;
  /** What FLATTEN returns for `v`: numbers to compare by value, bytes to compare exactly. */
  const expected = (v: LuaPackable): (Buffer | number)[] => {
    if (typeof v === 'number') return [v];
    if (typeof v === 'string') return [Buffer.from(v)];
    if (Buffer.isBuffer(v)) return [v];
    return [Buffer.from(`[${v.length}`), ...v.flatMap(expected), Buffer.from(']')];
  };

  it('When integers, doubles, strings, bytes and arrays of every length class are packed, then Lua reads each exactly', async () => {
    const ints = [0, 1, 127, 128, 255, 256, 65_535, 65_536, 2 ** 32 - 1, 2 ** 32, 10_000_000_000];
    const negatives = [-1, -32, -33, -128, -129, -32_768, -32_769, -(2 ** 31), -(2 ** 31) - 1];
    const strings = ['', 'a', 'é€', 'x'.repeat(31), 'x'.repeat(32), 'x'.repeat(255), 'x'.repeat(256)];
    const bytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    const value: LuaPackable = [
      ints,
      negatives,
      [1.5, -0.25, 1e-7],
      strings,
      [bytes, Buffer.alloc(0), Buffer.alloc(70_000, 0xc4)],
      'y'.repeat(70_000),
      Array.from({ length: 15 }, (_, i) => i),
      Array.from({ length: 16 }, (_, i) => String(i)),
      Array.from({ length: 70_000 }, () => 7),
      [[[['deep']]]],
    ];
    const got = (await redis.callBuffer('EVAL', [FLATTEN, 0, packForLua(value)])) as Buffer[];
    const want = expected(value);
    expect(got.length).to.equal(want.length);
    got.forEach((g, i) => {
      const w = want[i]!;
      if (typeof w === 'number') expect(Number(g.toString()), `item ${i}`).to.equal(w);
      else expect(g.equals(w), `item ${i}: ${g.toString('hex').slice(0, 40)}`).to.equal(true);
    });
  });
});

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
