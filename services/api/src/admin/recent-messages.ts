import type { Job } from 'bullmq';
import { MESSAGE_STATUSES, type MessageRecord, type MessageStatus, type SendJobData } from '@mgw/contracts';
import type { BatchStore, MessageStore, SendQueue } from '@mgw/store';

/** Every state a job of a device's queue can be in, newest first within each. */
const JOB_STATES = ['active', 'waiting', 'prioritized', 'delayed', 'completed', 'failed'] as const;

export interface BatchCounts {
  batchId: string;
  /** Messages of the whole batch by status (its stored counts; they sum to `total`). */
  counts: Record<MessageStatus, number>;
  total: number;
}

export interface RecentMessages {
  messages: MessageRecord[];
  /** Progress of each batch (a `/send` to a list) that has messages listed: the whole list's counts. */
  batches: BatchCounts[];
}

/**
 * The recent messages of a device, read from its send queue, which already indexes them by time:
 * waiting and active messages, those sent in the last hour (completed jobs are kept 1 h) and
 * failed ones (kept for the message retention). Each message's status comes from its record (or
 * its job while it is queued). Nothing is written on the send path for this; older messages are
 * still found by id (`GET .../messages/:messageId`, kept `MESSAGE_RETENTION_SECONDS`).
 */
export async function recentMessages(
  deps: { queue: SendQueue; messages: MessageStore; batches: BatchStore },
  deviceId: string,
  limit: number,
): Promise<RecentMessages> {
  // Up to `limit` of every state, then the newest `limit` of them all.
  const jobs = (await deps.queue.getJobs([...JOB_STATES], 0, limit - 1, false)).filter(
    (j): j is Job<SendJobData> => Boolean(j?.id && j.data?.messageId),
  );
  const newest = [...new Map(jobs.map((j) => [j.data.messageId, j])).values()]
    .sort((a, b) => b.data.enqueuedAt - a.data.enqueuedAt || b.data.messageId.localeCompare(a.data.messageId))
    .slice(0, limit);
  const records = await Promise.all(newest.map((j) => deps.messages.get(deviceId, j.data.messageId)));
  const messages = records.filter((r): r is MessageRecord => r !== undefined);
  // The stored counts of each list (GET /batches/:batchId), not just of the messages listed here.
  const batches = await Promise.all(
    batchCounts(messages).map(async (b) => {
      const stored = await deps.batches.get(deviceId, b.batchId);
      return stored ? { batchId: b.batchId, counts: stored.counts, total: stored.total } : b;
    }),
  );
  return { messages, batches };
}

export function batchCounts(messages: MessageRecord[]): BatchCounts[] {
  const byBatch = new Map<string, BatchCounts>();
  for (const m of messages) {
    if (!m.batchId) continue;
    let batch = byBatch.get(m.batchId);
    if (!batch) {
      const counts = Object.fromEntries(MESSAGE_STATUSES.map((s) => [s, 0])) as Record<MessageStatus, number>;
      batch = { batchId: m.batchId, counts, total: 0 };
      byBatch.set(m.batchId, batch);
    }
    batch.counts[m.status] += 1;
    batch.total += 1;
  }
  return [...byBatch.values()];
}
