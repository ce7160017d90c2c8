import { expect } from 'chai';
import { createHash, randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { Job } from 'bullmq';
import { Redis } from 'ioredis';
import { Unpackr } from 'msgpackr';
import { PRIORITY, newMessageId, type SendJobData } from '@mgw/contracts';
import {
  JOB_ADDING_SCRIPTS,
  addJobTo,
  jobScriptSources,
  jobScriptsLua,
  jobTransaction,
  type BullJobs,
  type JobAddingScript,
  type JobCommand,
  type SendJobOptions,
  type SendQueue,
} from '@mgw/store';
import { openTestSendQueue, sendJobData, sendJobOptions } from '@mgw/testing';

/**
 * The BullMQ door (`libs/store/src/queues/bullmq-door.ts`) holds everything the gateway takes from
 * BullMQ's internals. These tests fail, naming what differs, the day a BullMQ upgrade changes any
 * of it: the jobs the door packs against BullMQ's own `Job.addJob`, field by field, for every
 * shape of send job; the job-adding scripts it splices against the Lua BullMQ ships; and jobs added
 * through the spliced scripts and the door's transactions, read back by BullMQ.
 */

/** The BullMQ release the door was written and checked against. */
const DOOR_BULLMQ = '6.7.0';
/** The sha1 of the job-adding scripts' Lua in that release (what the accept script splices). */
const DOOR_LUA_SHA1: Record<JobAddingScript, string> = {
  addStandardJob: '5ab432e88830d573e2fa33392ffbd4ad25a9b100',
  addPrioritizedJob: '299880da0f75f0b376ee8e87d20eae62f964ac5e',
  addDelayedJob: '81698fd2d28e7db1787595b3c464b188fa78bdcf',
};
/** BullMQ's `addJobToTransaction` arguments, packed as ARGV[1], in order. */
const PACKED_ARGS = [
  'key prefix',
  'job id',
  'name',
  'timestamp',
  'parent key',
  'parent dependencies key',
  'parent',
  'repeat job key',
  'deduplication key',
  'defer parent release',
];

const load = createRequire(import.meta.url);
const bullmqPackage = load('bullmq/package.json') as {
  version: string;
  dependencies: Record<string, string>;
};
/** BullMQ's shipped scripts (`dist/*\/scripts`: each one's name, Lua with includes resolved, and key count). */
const shipped = load('bullmq/dist/cjs/scripts/index.js') as Record<
  string,
  { name: string; content: string; keys: number }
>;
/** BullMQ's unpacking options (those of its Packr). */
const unpackr = new Unpackr({ useRecords: false, encodeUndefinedAsNil: true });

const sha1 = (s: string) => createHash('sha1').update(s).digest('hex');
const show = (v: unknown) => (Buffer.isBuffer(v) ? `bytes ${v.toString('hex')}` : JSON.stringify(v));

describe('the BullMQ door (what the gateway takes from BullMQ 6.7.0 internals)', () => {
  let redis: Redis;
  let queue: SendQueue;
  let jobs: BullJobs;
  const deviceId = `door-${randomUUID().slice(0, 8)}`;

  let close: () => Promise<void>;

  before(async () => ({ redis, queue, jobs, close } = await openTestSendQueue(deviceId)));
  after(() => close());

  const data = (extra: Partial<SendJobData> = {}) => sendJobData(deviceId, extra);

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
    expect(queued, 'Job.addJob queued one script call').to.have.length(1);
    return queued[0]!;
  }

  /** Each difference between the door's command and BullMQ's, named (empty: the same). */
  function differences(ours: JobCommand, theirs: { script: string; args: unknown[] }): string[] {
    const out: string[] = [];
    const differ = (what: string, a: unknown, b: unknown) => {
      if (Buffer.isBuffer(a) && Buffer.isBuffer(b)) {
        if (a.equals(b)) return;
        let at = 0;
        while (at < a.length && a[at] === b[at]) at++;
        out.push(
          `${what}: from byte ${at}, ours ${show(a.subarray(at, at + 8))}…, BullMQ's ${show(b.subarray(at, at + 8))}…`,
        );
      } else if (show(a) !== show(b)) out.push(`${what}: ours ${show(a)}, BullMQ's ${show(b)}`);
    };
    const keyName = (k: unknown) => Object.entries(queue.keys).find(([, v]) => v === k)?.[0] ?? String(k);
    differ('script name', ours.script, theirs.script);
    const theirKeyCount = theirs.args.length - 3;
    differ('key count', ours.keyCount, theirKeyCount);
    for (let i = 0; i < Math.max(ours.keyCount, theirKeyCount); i++)
      differ(`KEYS[${i + 1}]`, keyName(ours.args[i]), keyName(theirs.args[i]));
    const [args, json, opts] = ours.args.slice(ours.keyCount);
    const [theirArgs, theirJson, theirOpts] = theirs.args.slice(theirKeyCount);
    const packed = unpackr.unpack(args as Buffer) as unknown[];
    const theirPacked = unpackr.unpack(theirArgs as Buffer) as unknown[];
    differ('ARGV[1] length', packed.length, theirPacked.length);
    for (let i = 0; i < Math.max(packed.length, theirPacked.length); i++)
      differ(`ARGV[1][${i + 1}] (${PACKED_ARGS[i] ?? '?'})`, packed[i], theirPacked[i]);
    differ('ARGV[1] bytes', args, theirArgs);
    differ('ARGV[2] (job data, JSON)', json, theirJson);
    const decoded = unpackr.unpack(opts as Buffer) as Record<string, unknown>;
    const theirDecoded = unpackr.unpack(theirOpts as Buffer) as Record<string, unknown>;
    differ('ARGV[3] option names, in order', Object.keys(decoded), Object.keys(theirDecoded));
    for (const name of new Set([...Object.keys(decoded), ...Object.keys(theirDecoded)]))
      differ(`ARGV[3].${name}`, decoded[name], theirDecoded[name]);
    differ('ARGV[3] bytes', opts, theirOpts);
    return out;
  }

  const shapes: [string, JobAddingScript, () => [SendJobData, SendJobOptions]][] = [
    ['a /send job', 'addPrioritizedJob', () => ((d) => [d, sendJobOptions(d, PRIORITY.send)])(data())],
    [
      'a batch job with a batch id',
      'addPrioritizedJob',
      () => ((d) => [d, sendJobOptions(d, PRIORITY.send)])(data({ batchId: newMessageId() })),
    ],
    [
      'an OTP job with an expiry',
      'addPrioritizedJob',
      () =>
        ((d) => [d, sendJobOptions(d, PRIORITY.otp)])(data({ kind: 'otp', expiresAt: Date.now() + 60_000 })),
    ],
    [
      'a scheduled job',
      'addDelayedJob',
      () =>
        ((d) => [d, sendJobOptions(d, PRIORITY.send, 3_600_000)])(data({ sendAt: Date.now() + 3_600_000 })),
    ],
    ['a job without priority', 'addStandardJob', () => ((d) => [d, sendJobOptions(d, 0)])(data())],
    [
      'a job with a zero delay',
      'addPrioritizedJob',
      () => ((d) => [d, sendJobOptions(d, PRIORITY.send, 0)])(data()),
    ],
  ];
  for (const [what, script, shape] of shapes) {
    it(`When ${what} is packed (${script}), then its script, keys, arguments and options are field by field Job.addJob's`, async () => {
      const [d, opts] = shape();
      const at = Date.now();
      const ours = jobs.command(d.kind, d, opts, at);
      const theirs = await bullmqCommand(d, opts, at);
      expect(ours.plain, 'the script the door picks').to.equal(script);
      const found = differences(ours, theirs);
      expect(found, `the door packs ${what} unlike BullMQ ${bullmqPackage.version}:\n${found.join('\n')}`).to
        .be.empty;
    });
  }

  it('When the installed BullMQ is checked, then it is the release the door was written for, and the door packs with its copy of msgpackr', () => {
    expect(bullmqPackage.version, 'the installed BullMQ (the door relies on 6.7.0 internals)').to.equal(
      DOOR_BULLMQ,
    );
    // One copy of msgpackr, resolved from BullMQ and from the door alike (same version, same code).
    const msgpackrOf = (from: string) => createRequire(from).resolve('msgpackr');
    expect(
      msgpackrOf(new URL('../package.json', import.meta.url).pathname),
      "the door's msgpackr (libs/store) against BullMQ's",
    ).to.equal(msgpackrOf(load.resolve('bullmq/package.json')));
  });

  for (const plain of JOB_ADDING_SCRIPTS) {
    it(`When ${plain} is read from BullMQ's connection, then it is the script BullMQ ships, unchanged since ${DOOR_BULLMQ}`, async () => {
      const source = (await jobScriptSources(queue))[plain];
      expect(source, `${plain} on BullMQ's connection (ioredis scriptsSet)`).to.not.equal(undefined);
      expect(source!.name, `${plain}'s versioned name`).to.equal(`${plain}:${bullmqPackage.version}`);
      const theirs = shipped[plain];
      expect(theirs, `${plain} among BullMQ's shipped scripts`).to.not.equal(undefined);
      expect(
        source!.lua === theirs!.content,
        `${plain}'s Lua on the connection is the shipped text`,
      ).to.equal(true);
      expect(source!.numberOfKeys, `${plain}'s key count`).to.equal(theirs!.keys);
      expect(
        sha1(source!.lua),
        `${plain}'s Lua changed since BullMQ ${DOOR_BULLMQ} (now ${bullmqPackage.version}): check what it reads ` +
          '(KEYS, ARGV, cmsgpack) and that it still runs as a function (bullmq-door.ts, points 1–4), then pin the new sha1',
      ).to.equal(DOOR_LUA_SHA1[plain]);
    });
  }

  it('When jobs of every shape are added through the spliced scripts, then BullMQ reads each as its own job, in the right state', async () => {
    const lua = await jobScriptsLua(queue);
    expect(lua.startsWith('local bull = {}\n'), 'the splice defines the `bull` table').to.equal(true);
    // As the accept script calls them: `bull[plain](keys, { three arguments })`.
    const script = `${lua}
local n = tonumber(ARGV[1])
local keys = {}
for i = 1, n do keys[i] = KEYS[i] end
return bull[ARGV[2]](keys, { ARGV[3], ARGV[4], ARGV[5] })`;
    const made: [SendJobData, SendJobOptions, string][] = [
      ((d) => [d, sendJobOptions(d, PRIORITY.send), 'prioritized'])(data()),
      ((d) => [d, sendJobOptions(d, 0), 'waiting'])(data()),
      ((d) => [d, sendJobOptions(d, PRIORITY.send, 3_600_000), 'delayed'])(
        data({ sendAt: Date.now() + 3_600_000 }),
      ),
    ];
    for (const [d, opts, state] of made) {
      const { plain, keyCount, args } = jobs.command(d.kind, d, opts);
      const id = await redis.callBuffer('EVAL', [
        script,
        keyCount,
        ...args.slice(0, keyCount),
        keyCount,
        plain,
        ...args.slice(keyCount),
      ]);
      expect(String(id), `${plain}'s reply (the job id)`).to.equal(d.messageId);
      const added = await queue.getJob(d.messageId);
      expect(added?.data, `${plain}: the job's data`).to.deep.equal(d);
      expect(added?.opts, `${plain}: the job's options`).to.deep.include({
        priority: opts.priority,
        attempts: 5,
        ...(opts.delay ? { delay: opts.delay } : {}),
      });
      expect(await added?.getState(), `${plain}: the job's state`).to.equal(state);
    }
  });

  it('When a job is added with addJobTo on a jobTransaction (another connection), then BullMQ reads it and that connection holds only the job-adding scripts', async () => {
    const d = data();
    const tx = await jobTransaction(redis, queue);
    await addJobTo(tx, queue, d, sendJobOptions(d, PRIORITY.send));
    const replies = (await tx.exec()) ?? [];
    expect(replies.map(([err]) => err?.message ?? null)).to.deep.equal([null]);
    const added = await queue.getJob(d.messageId);
    expect(added?.data).to.deep.equal(d);
    expect(await added?.getState()).to.equal('prioritized');
    const defined = Object.keys((redis as unknown as { scriptsSet: Record<string, unknown> }).scriptsSet);
    expect(defined.sort()).to.deep.equal(
      JOB_ADDING_SCRIPTS.map((p) => `${p}:${bullmqPackage.version}`).sort(),
    );
  });
});
