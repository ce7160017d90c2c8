import { Queue, type ConnectionOptions } from 'bullmq';
import { BULL_PREFIX, sendQueueName, type SendJobData, type SendJobResult } from '@mgw/contracts';

export type SendQueue = Queue<SendJobData, SendJobResult>;

/** The send queue of a device (BullMQ options every producer and consumer must agree on). */
export function openSendQueue(connection: ConnectionOptions, deviceId: string): SendQueue {
  return new Queue<SendJobData, SendJobResult>(sendQueueName(deviceId), { connection, prefix: BULL_PREFIX });
}

/**
 * Waits (bounded) until no job of the queue is waiting, prioritized, delayed or active; delayed
 * jobs are promoted so a worker that fails every job (a retired device) reaches them at once.
 * Resolves true when the queue emptied in time.
 */
export async function waitUntilQueueEmpty(queue: Queue, timeoutMs: number, pollMs = 200): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await queue.promoteJobs().catch(() => undefined);
    const counts = await queue.getJobCounts('waiting', 'prioritized', 'delayed', 'active');
    if (Object.values(counts).every((n) => n === 0)) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((r) => setTimeout(r, pollMs));
  }
}
