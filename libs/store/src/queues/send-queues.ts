import type { RedisClient } from '@mgw/common';
import { Queue, type ConnectionOptions, type Job } from 'bullmq';
import { BULL_PREFIX, sendQueueName, type SendJobData, type SendJobResult } from '@mgw/contracts';
import { nextLinkGeneration } from '../devices/device-state.js';
import type { MessageStore } from '../messages/message-store.js';
import { queueTelemetry } from './queue-telemetry.js';

export type SendQueue = Queue<SendJobData, SendJobResult>;

/** The send queue of a device (BullMQ options every producer and consumer must agree on). */
export function openSendQueue(connection: ConnectionOptions, deviceId: string): SendQueue {
  return new Queue<SendJobData, SendJobResult>(sendQueueName(deviceId), {
    connection,
    prefix: BULL_PREFIX,
    telemetry: queueTelemetry(),
  });
}

/** Every state in which a job waits to be taken by a worker (a paused queue keeps them in `waiting`). */
const WAITING_STATES = ['waiting', 'prioritized', 'delayed'] as const;
const PAGE = 500;

/**
 * Removes the device's messages: starts a new link generation (a message accepted before it is
 * never sent, by this link or a later one), then ends every waiting job (waiting, prioritized,
 * delayed, or held by a paused queue) with its record `failed` / `reason` and removes it — except a
 * pooled message whose send never began here, which stays for its pool's mover to give to another
 * device. A job a worker holds
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
  // A pooled message stays (its pool's mover gives it to another device): the pages skip them.
  let kept = 0;
  for (;;) {
    const page = (await deps.queue.getJobs([...WAITING_STATES], kept, kept + PAGE - 1)).filter(
      (j): j is Job<SendJobData, SendJobResult> => Boolean(j?.id),
    );
    if (page.length === 0) return ended;
    // A pooled message whose send began here (a retry waiting after an attempt that may have
    // reached WhatsApp, or whose process died mid-attempt) never moves: it ends like any other. One
    // whose attempts all ended before the socket did not begin (docs/architecture.md).
    const started = await Promise.all(
      page.map((j) => (j.data.poolId ? deps.messages.sendBegan(j.data) : true)),
    );
    const jobs = page.filter((_, i) => started[i]);
    kept += page.length - jobs.length;
    if (jobs.length === 0) continue;
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
