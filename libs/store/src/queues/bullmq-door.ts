/**
 * The one door to BullMQ's internals. The gateway adds send jobs faster than BullMQ's `Job`
 * objects allow (the accept path adds thousands a second inside its own Lua script), and it hands
 * a dead sender's jobs to the next at once; both need what BullMQ does not publish. Every such
 * reliance is here, and only here, for **BullMQ 6.7.0** (pinned exactly in every manifest):
 *
 * 1. **Job packing** (`BullJobs.command`): what `new Job(queue, name, data, opts, jobId)
 *    .addJob(tx)` queues — `RedisQueueBackend.addJobToTransaction`: msgpackr with
 *    `{ useRecords: false, encodeUndefinedAsNil: true }`; its ten packed arguments (key prefix,
 *    job id, name, timestamp, parent key, parent dependencies key, parent, repeat job key,
 *    deduplication key, defer parent release); the job data as JSON; the options as `optsAsJSON`
 *    leaves them (send jobs use no option it renames) in `new Job`'s order (`attempts` first).
 * 2. **Which script and keys**: `addDelayedJob` when `delay > 0`, else `addPrioritizedJob` when
 *    `priority`, else `addStandardJob`, each with its keys from `queue.keys` in its own order.
 * 3. **Its scripts cache**: BullMQ defines its scripts on its connection with ioredis's
 *    `defineCommand` as `<name>:<version>`; the connection (`queue.getBackend().client`, an
 *    ioredis instance behind BullMQ's proxy) keeps them in ioredis's `scriptsSet`
 *    (`{ lua, numberOfKeys }`) — read by `jobScriptSources`.
 * 4. **Splicing** (`jobScriptsLua`): the three job-adding scripts' Lua runs unchanged as Lua
 *    functions of ours, `bull[plain](KEYS, ARGV)`: it reads only its `KEYS` and `ARGV` (ARGV[1]
 *    through `cmsgpack.unpack`) and ends with a `return`.
 * 5. **Transactions**: `Job.addJob(tx)` calls `tx.runCommand(<name>:<version>, keysAndArgs)`
 *    (`jobTransaction` gives a plain ioredis transaction that method).
 * 6. **Key layout** (`reclaimActiveJobs`): a job's lock is `<queue prefix><id>:lock`; the stalled
 *    check moves the ids of the `stalled` set back to waiting, throttled by `stalled-check`.
 *
 * `libs/store/test/bullmq-door.test.ts` fails, naming the difference, the day an upgrade changes
 * any of these (docs/development.md, "Upgrading BullMQ and Baileys safely").
 */
import { Packr } from 'msgpackr';
import { Job, type JobsOptions } from 'bullmq';
import type { ChainableCommander } from 'ioredis';
import type { RedisClient } from '@mgw/common';
import type { SendJobData } from '@mgw/contracts';
import { storeScript } from '../lua.js';
import type { SendQueue } from './send-queues.js';

/** BullMQ's packer, with its options exactly. */
const packr = new Packr({ useRecords: false, encodeUndefinedAsNil: true });

/** The job-adding scripts the gateway uses, by their plain names. */
export const JOB_ADDING_SCRIPTS = ['addStandardJob', 'addPrioritizedJob', 'addDelayedJob'] as const;
export type JobAddingScript = (typeof JOB_ADDING_SCRIPTS)[number];

/** The names BullMQ gives the scripts that add a job: `addStandardJob:<version>` and its kin. */
const JOB_ADDING_SCRIPT = /^(add(?:Standard|Prioritized|Delayed)Job):/;

/** The options of a send job, as the gateway gives them (see `JobWriter.jobOptions`). */
export interface SendJobOptions {
  jobId: string;
  priority: number;
  delay?: number;
  attempts: number;
  backoff: { type: 'exponential'; delay: number };
  removeOnComplete: { age: number };
  removeOnFail: { age: number };
  /** The accept's trace context, in BullMQ's own format (queue-telemetry.ts `jobTraceOptions`). */
  telemetry?: { metadata: string };
}

/** The Redis script call that adds one job: the script's versioned name and its keys and arguments. */
export interface JobCommand {
  script: string;
  args: (string | Buffer)[];
  /** The script's plain name (`addPrioritizedJob`…). */
  plain: JobAddingScript;
  /** How many of `args` are keys (the same for every job of the queue and script). */
  keyCount: number;
}

/**
 * What `new Job(queue, name, data, opts, jobId).addJob(tx)` queues on `tx`, built without the
 * `Job` object (its constructor, `asJSON` and the promise chain cost ~40 µs a job): the same
 * script, the same keys and the same packed arguments, so a BullMQ worker reads the job as if
 * BullMQ had added it. Only what send jobs use is covered (no parent, repeat or deduplication).
 * Made by `openBullJobs`.
 */
export class BullJobs {
  private readonly keys: Record<string, string>;

  constructor(
    queue: SendQueue,
    /** The job-adding scripts' versioned names (`addStandardJob:<version>`…), by their plain name. */
    private readonly scripts: Readonly<Record<string, string>>,
  ) {
    this.keys = queue.keys;
  }

  command(name: string, data: SendJobData, opts: SendJobOptions, timestamp = Date.now()): JobCommand {
    const k = this.keys;
    const delayed = opts.delay !== undefined && opts.delay > 0;
    // The options as `new Job` keeps them: `attempts` first (its default), then in the order given
    // (`JobWriter.jobOptions`), no undefined field.
    const encodedOpts = packr.pack({
      attempts: opts.attempts,
      jobId: opts.jobId,
      priority: opts.priority,
      ...(opts.delay !== undefined ? { delay: opts.delay } : {}),
      backoff: opts.backoff,
      removeOnComplete: opts.removeOnComplete,
      removeOnFail: opts.removeOnFail,
      // BullMQ keeps `telemetry.metadata` as `tm` (its optsAsJSON).
      ...(opts.telemetry ? { tm: opts.telemetry.metadata } : {}),
    });
    const args = packr.pack([
      k['']!,
      opts.jobId,
      name,
      timestamp,
      null,
      null,
      undefined,
      undefined,
      null,
      null,
    ]);
    const json = JSON.stringify(data);
    let script: JobAddingScript;
    let keys: string[];
    if (delayed) {
      script = 'addDelayedJob';
      keys = [k.marker!, k.meta!, k.id!, k.delayed!, k.completed!, k.events!];
    } else if (opts.priority) {
      script = 'addPrioritizedJob';
      keys = [
        k.marker!,
        k.meta!,
        k.id!,
        k.prioritized!,
        k.delayed!,
        k.completed!,
        k.active!,
        k.events!,
        k.pc!,
      ];
    } else {
      script = 'addStandardJob';
      keys = [k.wait!, k.paused!, k.meta!, k.id!, k.completed!, k.delayed!, k.active!, k.events!, k.marker!];
    }
    const versioned = this.scripts[script];
    if (!versioned) throw new Error(`BullMQ's ${script} script was not found`);
    return {
      script: versioned,
      args: [...keys, args, json, encodedOpts],
      plain: script,
      keyCount: keys.length,
    };
  }
}

/** The job builder of `queue` (its scripts' versioned names read once from BullMQ's connection). */
export async function openBullJobs(queue: SendQueue): Promise<BullJobs> {
  const sources = await jobScriptSources(queue);
  return new BullJobs(queue, Object.fromEntries(Object.entries(sources).map(([k, v]) => [k, v.name])));
}

interface Script {
  lua: string;
  numberOfKeys: number;
}

/** BullMQ's scripts as its connection holds them (ioredis's `scriptsSet`), by versioned name. */
async function bullScripts(queue: SendQueue): Promise<Record<string, Script>> {
  const client = (await queue.getBackend().client) as unknown as { scriptsSet?: Record<string, Script> };
  return client.scriptsSet ?? {};
}

/** One of BullMQ's job-adding scripts: its versioned name, its Lua (includes resolved) and key count. */
export interface JobScriptSource {
  name: string;
  lua: string;
  numberOfKeys: number;
}

/**
 * The source of BullMQ's job-adding scripts as the queue's own connection defines them, by plain
 * name (`addStandardJob`, `addPrioritizedJob`, `addDelayedJob`).
 */
export async function jobScriptSources(queue: SendQueue): Promise<Readonly<Record<string, JobScriptSource>>> {
  const out: Record<string, JobScriptSource> = {};
  for (const [name, script] of Object.entries(await bullScripts(queue))) {
    const plain = JOB_ADDING_SCRIPT.exec(name)?.[1];
    if (plain) out[plain] = { name, lua: script.lua, numberOfKeys: script.numberOfKeys };
  }
  // A BullMQ upgrade that renamed them must fail loudly here, not on the first job.
  if (Object.keys(out).length === 0)
    throw new Error("BullMQ's job-adding scripts were not found on its connection");
  return out;
}

/**
 * Lua that defines BullMQ's job-adding scripts as functions of a script of ours, their own code
 * given the keys and arguments they take as a script: `local bull = {}` and
 * `bull.addPrioritizedJob(KEYS, ARGV)` and its kin. A job of `BullJobs.command` is added by
 * `bull[command.plain](keys, { a1, a2, a3 })`: its `args` before `keyCount`, then the three after.
 */
export async function jobScriptsLua(queue: SendQueue): Promise<string> {
  const bull = Object.entries(await jobScriptSources(queue))
    .map(([plain, { lua }]) => `bull[${JSON.stringify(plain)}] = function(KEYS, ARGV)\n${lua}\nend\n`)
    .join('');
  return `local bull = {}\n${bull}`;
}

/** A transaction that BullMQ's `Job.addJob` can add jobs to (it calls `runCommand`). */
export type JobTransaction = ChainableCommander & {
  runCommand(name: string, args: (string | Buffer | number)[]): JobTransaction;
};

const adopted = new WeakMap<RedisClient, Readonly<Record<string, string>>>();

/**
 * Defines on `redis` (not on BullMQ's connection) the scripts that add a job, copied once from the
 * queue's own connection, so their names, versions and code are BullMQ's; they run by SHA (ioredis
 * sends the code only the first time on a socket). Returns their versioned names by plain name.
 */
async function adoptJobScripts(
  redis: RedisClient,
  queue: SendQueue,
): Promise<Readonly<Record<string, string>>> {
  const known = adopted.get(redis);
  if (known) return known;
  const names: Record<string, string> = {};
  for (const [plain, script] of Object.entries(await jobScriptSources(queue))) {
    names[plain] = script.name;
    if (!(script.name in redis))
      redis.defineCommand(script.name, { numberOfKeys: script.numberOfKeys, lua: script.lua });
  }
  adopted.set(redis, names);
  return names;
}

/**
 * Starts a transaction on `redis` (not on BullMQ's connection) to which jobs of `queue` can be
 * added (`addJobTo`). ioredis copies every script defined on a connection into each transaction
 * started on it, and BullMQ's connection defines about fifty: there a transaction costs ~50 µs
 * before its first command. Here only the scripts that add a job are defined.
 */
export async function jobTransaction(redis: RedisClient, queue: SendQueue): Promise<JobTransaction> {
  await adoptJobScripts(redis, queue);
  const tx = redis.multi() as JobTransaction;
  const commands = tx as unknown as Record<string, (args: unknown[]) => unknown>;
  tx.runCommand = (name, args) => {
    commands[name]!(args);
    return tx;
  };
  return tx;
}

/** Adds a job to `tx` (of `jobTransaction`) with BullMQ's own `Job.addJob`. */
export async function addJobTo(
  tx: JobTransaction,
  queue: SendQueue,
  data: SendJobData,
  opts: JobsOptions & { jobId: string },
): Promise<void> {
  await new Job(queue, data.kind, data, opts, opts.jobId).addJob(tx as never);
}

/**
 * Voids the locks of every job active in a send queue and marks each as stalled, so the next
 * stalled check (a worker runs one as it starts) moves them back to waiting at once. BullMQ's own
 * stall handling does the rest: the same job (the same WhatsApp id), counted against
 * `maxStalledCount`. The stalled check's throttle (`stalled-check`, set by the last worker that
 * checked) goes too (see `lua/send-queue-reclaim-3.lua`).
 */
const RECLAIM = storeScript<number>('send-queue-reclaim-3');

/**
 * A new holder takes the device (its lease's epoch fences every earlier one): the jobs an earlier
 * holder left active — a sender killed mid-send, whose locks would otherwise hold them for up to
 * the worker's `lockDuration` and a stalled interval more — are handed to this holder's worker.
 * Call it before this holder's worker runs (every job active then is an earlier holder's); a
 * holder that was only frozen finds its locks gone and cannot complete those jobs (the re-send has
 * the same WhatsApp id). Returns how many there were.
 */
export async function reclaimActiveJobs(redis: RedisClient, queue: SendQueue): Promise<number> {
  return RECLAIM.run(
    redis,
    [queue.keys.active!, queue.keys.stalled!, queue.keys['stalled-check']!],
    [queue.toKey('')],
  );
}
