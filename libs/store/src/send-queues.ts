import { RedisScript, type RedisClient } from '@mgw/common';
import { Queue, type ConnectionOptions, type Job } from 'bullmq';
import type { ChainableCommander } from 'ioredis';
import { BULL_PREFIX, sendQueueName, type SendJobData, type SendJobResult } from '@mgw/contracts';
import { nextLinkGeneration } from './device-state.js';
import type { MessageStore } from './message-store.js';

export type SendQueue = Queue<SendJobData, SendJobResult>;

/** The send queue of a device (BullMQ options every producer and consumer must agree on). */
export function openSendQueue(connection: ConnectionOptions, deviceId: string): SendQueue {
  return new Queue<SendJobData, SendJobResult>(sendQueueName(deviceId), { connection, prefix: BULL_PREFIX });
}

/** Every state in which a job waits to be taken by a worker (a paused queue keeps them in `waiting`). */
const WAITING_STATES = ['waiting', 'prioritized', 'delayed'] as const;
const PAGE = 500;

/**
 * Removes the device's messages: starts a new link generation (a message accepted before it is
 * never sent, by this link or a later one), then ends every waiting job (waiting, prioritized,
 * delayed, or held by a paused queue) with its record `failed` / `reason` and removes it. A job a worker holds
 * right now cannot be removed: its worker sees the new generation (or its retired device) and
 * fails it when its attempt ends. Bounded by `timeoutMs`; returns how many were ended.
 */
export async function purgeDeviceMessages(
  deps: { redis: RedisClient; queue: SendQueue; messages: MessageStore },
  deviceId: string,
  reason: string,
  timeoutMs = 30_000,
): Promise<number> {
  await nextLinkGeneration(deps.redis, deviceId);
  const deadline = Date.now() + timeoutMs;
  let ended = 0;
  for (;;) {
    const jobs = (await deps.queue.getJobs([...WAITING_STATES], 0, PAGE - 1)).filter(
      (j): j is Job<SendJobData, SendJobResult> => Boolean(j?.id),
    );
    if (jobs.length === 0) return ended;
    // Record first, then remove: a crash in between leaves a failed record whose job fails at once.
    await Promise.all(jobs.map((j) => deps.messages.markFailed(j.data, reason)));
    const removed = await Promise.all(jobs.map((j) => deps.queue.remove(j.id!).catch(() => 0)));
    ended += jobs.length;
    // Only jobs a worker took meanwhile stayed: stop once a page removes nothing.
    if (removed.every((r) => r === 0) || Date.now() > deadline) return ended;
  }
}

/** Waits (bounded) until the queue has no active job (an attempt in flight ends); true if it did. */
export async function waitUntilNoActiveJob(queue: Queue, timeoutMs: number, pollMs = 100): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if ((await queue.getActiveCount()) === 0) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((r) => setTimeout(r, pollMs));
  }
}

/**
 * Voids the locks of every job active in a send queue and marks each as stalled, so the next
 * stalled check (a worker runs one as it starts) moves them back to waiting at once. BullMQ's own
 * stall handling does the rest: the same job (the same WhatsApp id), counted against
 * `maxStalledCount`. The stalled check's throttle (`stalled-check`, set by the last worker that
 * checked) goes too. KEYS: active, stalled, stalled-check. ARGV: the queue's key prefix
 * (`queue.toKey('')`; a job's lock is `<prefix><id>:lock`, in the queue's slot).
 */
const RECLAIM = new RedisScript<number>(
  'mgwSendQueueReclaim',
  `
local ids = redis.call('LRANGE', KEYS[1], 0, -1)
for _, id in ipairs(ids) do
  redis.call('DEL', ARGV[1] .. id .. ':lock')
  redis.call('SADD', KEYS[2], id)
end
if #ids > 0 then redis.call('DEL', KEYS[3]) end
return #ids
`,
);

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

/** A transaction that BullMQ's `Job.addJob` can add jobs to (it calls `runCommand`). */
export type JobTransaction = ChainableCommander & {
  runCommand(name: string, args: (string | Buffer | number)[]): JobTransaction;
};

/** The names BullMQ gives the scripts that add a job: `addStandardJob:<version>` and its kin. */
const JOB_ADDING_SCRIPT = /^(add(?:Standard|Prioritized|Delayed)Job):/;
const adopted = new WeakMap<RedisClient, Readonly<Record<string, string>>>();

/**
 * Defines on `redis` (not on BullMQ's connection) the scripts that add a job, copied once from the
 * queue's own connection, so their names, versions and code are BullMQ's; they run by SHA (ioredis
 * sends the code only the first time on a socket). Returns their versioned names by plain name
 * (`addPrioritizedJob` -> `addPrioritizedJob:<version>`).
 */
export async function adoptJobScripts(
  redis: RedisClient,
  queue: SendQueue,
): Promise<Readonly<Record<string, string>>> {
  const known = adopted.get(redis);
  if (known) return known;
  const bull = (await queue.getBackend().client) as unknown as { scriptsSet: Record<string, Script> };
  const names: Record<string, string> = {};
  for (const [name, script] of Object.entries(bull.scriptsSet)) {
    const plain = JOB_ADDING_SCRIPT.exec(name)?.[1];
    if (!plain) continue;
    names[plain] = name;
    if (!(name in redis)) redis.defineCommand(name, { numberOfKeys: script.numberOfKeys, lua: script.lua });
  }
  // A BullMQ upgrade that renamed them must fail loudly here, not on the first job.
  if (Object.keys(names).length === 0)
    throw new Error("BullMQ's job-adding scripts were not found on its connection");
  adopted.set(redis, names);
  return names;
}

/**
 * Starts a transaction on `redis` (not on BullMQ's connection) to which jobs of `queue` can be
 * added with `new Job(...).addJob(tx)`. ioredis copies every script defined on a connection into
 * each transaction started on it, and BullMQ's connection defines about fifty: there a transaction
 * costs ~50 µs before its first command. Here only the scripts that add a job are defined
 * (`adoptJobScripts`).
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

interface Script {
  lua: string;
  numberOfKeys: number;
}

/** One of BullMQ's job-adding scripts: its versioned name, its Lua (includes resolved) and key count. */
export interface JobScriptSource {
  name: string;
  lua: string;
  numberOfKeys: number;
}

/**
 * The source of BullMQ's job-adding scripts as the queue's own connection defines them, by plain
 * name (`addStandardJob`, `addPrioritizedJob`, `addDelayedJob`): for a script of ours that adds
 * jobs the way BullMQ does, with BullMQ's own code.
 */
export async function jobScriptSources(queue: SendQueue): Promise<Readonly<Record<string, JobScriptSource>>> {
  const bull = (await queue.getBackend().client) as unknown as { scriptsSet: Record<string, Script> };
  const out: Record<string, JobScriptSource> = {};
  for (const [name, script] of Object.entries(bull.scriptsSet)) {
    const plain = JOB_ADDING_SCRIPT.exec(name)?.[1];
    if (plain) out[plain] = { name, lua: script.lua, numberOfKeys: script.numberOfKeys };
  }
  if (Object.keys(out).length === 0)
    throw new Error("BullMQ's job-adding scripts were not found on its connection");
  return out;
}
