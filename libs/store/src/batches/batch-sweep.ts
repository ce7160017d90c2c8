import type { Job } from 'bullmq';
import type { RedisClient } from '@mgw/common';
import { FAILURE_REASONS, keys, type SendJobData, type SendJobResult } from '@mgw/contracts';
import { heldMessageIds } from './batch-control.js';
import type { MessageStore } from '../messages/message-store.js';
import type { SendQueue } from '../queues/send-queues.js';

/** Every state a job of the device's queue can be in before it is finished (a paused queue keeps them in `waiting`). */
const UNFINISHED = ['waiting', 'prioritized', 'delayed', 'active', 'waiting-children'] as const;
const PAGE = 500;

export interface BatchSweepDeps {
  redis: RedisClient;
  queue: SendQueue;
  messages: MessageStore;
}

/**
 * After a cancel (batch-control.ts): fails every message of the batch that no send attempt has
 * started (`failed` / `cancelled`, through the transition script, so the batch's counts move) and
 * removes its job. A message whose attempt started before the cancel is left to that attempt: it
 * is sent, or its next attempt is refused by the claim (the batch is cancelled) and fails
 * `cancelled` at once — its job is promoted if it waits for a retry, so that happens now rather
 * than after the backoff. The queue is read whole first (jobs of every batch are in it), then the
 * batch's jobs are ended. Returns how many records this call failed.
 */
export async function cancelBatchMessages(
  deps: BatchSweepDeps,
  deviceId: string,
  batchId: string,
): Promise<number> {
  const mine: Job<SendJobData, SendJobResult>[] = [];
  for (let start = 0; ; start += PAGE) {
    const jobs = await deps.queue.getJobs([...UNFINISHED], start, start + PAGE - 1);
    for (const j of jobs)
      if (j?.id && j.data?.batchId === batchId && j.data.deviceId === deviceId) mine.push(j);
    if (jobs.length < PAGE) break;
  }
  let ended = 0;
  for (let i = 0; i < mine.length; i += PAGE) {
    const outcomes = await Promise.all(
      mine.slice(i, i + PAGE).map(async (job) => {
        const outcome = await deps.messages.expireUnclaimed(job.data, FAILURE_REASONS.cancelled);
        if (outcome === 'expired') {
          // Record first, then the job: a job a worker took meanwhile fails at its claim.
          await deps.queue.remove(job.id!).catch(() => 0);
        } else if (outcome === 'claimed') {
          await job.promote().catch(() => undefined);
        }
        return outcome;
      }),
    );
    ended += outcomes.filter((o) => o === 'expired').length;
  }
  return ended;
}

/**
 * After a resume: the batch's messages held because it was paused go back to the queue now instead
 * of when the sender would look again. Another hold reason (a cap, quiet hours) is left as it is.
 * A message being held right as the resume ran is promoted by its sender (see the sender's hold).
 * Returns how many jobs were promoted.
 */
export async function wakePausedHolds(
  deps: BatchSweepDeps,
  deviceId: string,
  batchId: string,
): Promise<number> {
  let woken = 0;
  for await (const ids of heldMessageIds(deps.redis, deviceId, batchId)) {
    const pipe = deps.redis.pipeline();
    for (const id of ids) pipe.hget(keys.message(deviceId, id), 'heldReason');
    const reasons = ((await pipe.exec()) ?? []).map(([, r]) => r);
    const paused = ids.filter((_, i) => reasons[i] === 'batch_paused');
    const done = await Promise.all(paused.map((id) => promoteIfDelayed(deps.queue, id)));
    woken += done.filter(Boolean).length;
  }
  return woken;
}

/** Moves a delayed job to waiting now; false when it is not delayed (or gone). */
export async function promoteIfDelayed(queue: SendQueue, jobId: string): Promise<boolean> {
  const job = await queue.getJob(jobId);
  if (!job) return false;
  try {
    await job.promote();
    return true;
  } catch {
    return false; // not delayed (any more): taken by a worker, or already waiting
  }
}
