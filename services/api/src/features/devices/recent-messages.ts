import type { Job } from 'bullmq';
import type { RedisClient } from '@mgw/common';
import {
  MESSAGE_STATUSES,
  keys,
  type MessageRecord,
  type MessageStatus,
  type SendJobData,
} from '@mgw/contracts';
import type {
  BatchStore,
  InboundRecord,
  InboundStore,
  MessageIndex,
  MessageStore,
  SendQueue,
} from '@mgw/store';

/** Every state a job of a device's queue can be in, newest first within each. */
const JOB_STATES = ['active', 'waiting', 'prioritized', 'delayed', 'completed', 'failed'] as const;

export interface BatchCounts {
  batchId: string;
  /** Messages of the whole batch by status (its stored counts; they sum to `total`). */
  counts: Record<MessageStatus, number>;
  total: number;
}

/** Which messages a page lists: all, those the device sent, or those contacts wrote. */
export const DIRECTIONS = ['all', 'outbound', 'inbound'] as const;
export type DirectionFilter = (typeof DIRECTIONS)[number];

/**
 * How many of the device's newest messages (its message index, GET /messages's order) are looked
 * through for those contacts wrote: a list of thousands just sent may hide older ones past this.
 */
export const INBOUND_SCAN = 1000;
const INDEX_PAGE = 200;

export interface RecentMessages {
  /** Newest first; a message a contact wrote is its inbound record (`direction: "inbound"`). */
  messages: (MessageRecord | InboundRecord)[];
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
  deps: {
    queue: SendQueue;
    messages: MessageStore;
    batches: BatchStore;
    index: MessageIndex;
    inbound: InboundStore;
    redis: RedisClient;
  },
  deviceId: string,
  limit: number,
  direction: DirectionFilter = 'all',
): Promise<RecentMessages> {
  const [outbound, inbound] = await Promise.all([
    direction === 'inbound' ? [] : recentOutbound(deps, deviceId, limit),
    direction === 'outbound' ? [] : recentInbound(deps, deviceId, limit),
  ]);
  // Merged by time: when accepted (outbound) or received (inbound).
  const messages = [...outbound, ...inbound]
    .sort(
      (a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt) || b.messageId.localeCompare(a.messageId),
    )
    .slice(0, limit);
  // The stored counts of each list (GET /batches/:batchId), not just of the messages listed here.
  const batches = await Promise.all(
    batchCounts(outbound.filter((m) => messages.includes(m))).map(async (b) => {
      const stored = await deps.batches.get(deviceId, b.batchId);
      return stored ? { batchId: b.batchId, counts: stored.counts, total: stored.total } : b;
    }),
  );
  return { messages, batches };
}

async function recentOutbound(
  deps: { queue: SendQueue; messages: MessageStore },
  deviceId: string,
  limit: number,
): Promise<MessageRecord[]> {
  // Up to `limit` of every state, then the newest `limit` of them all.
  const jobs = (await deps.queue.getJobs([...JOB_STATES], 0, limit - 1, false)).filter(
    (j): j is Job<SendJobData> => Boolean(j?.id && j.data?.messageId),
  );
  const newest = [...new Map(jobs.map((j) => [j.data.messageId, j])).values()]
    .sort((a, b) => b.data.enqueuedAt - a.data.enqueuedAt || b.data.messageId.localeCompare(a.data.messageId))
    .slice(0, limit);
  const records = await Promise.all(newest.map((j) => deps.messages.get(deviceId, j.data.messageId)));
  return records.filter((r): r is MessageRecord => r !== undefined);
}

/**
 * The newest messages contacts wrote: found in the device's message index (which holds both
 * directions), newest first, looking through at most INBOUND_SCAN entries.
 */
async function recentInbound(
  deps: { index: MessageIndex; inbound: InboundStore; redis: RedisClient },
  deviceId: string,
  limit: number,
): Promise<InboundRecord[]> {
  const found: InboundRecord[] = [];
  let before: number | undefined;
  for (let scanned = 0; found.length < limit && scanned < INBOUND_SCAN;) {
    const page = await deps.index.before(deviceId, before, INDEX_PAGE);
    if (page.length === 0) break;
    scanned += page.length;
    before = page[page.length - 1]!.seq;
    const directions = await Promise.all(
      page.map((e) => deps.redis.hget(keys.message(deviceId, e.messageId), 'direction')),
    );
    const records = await Promise.all(
      page.filter((_, i) => directions[i] === 'inbound').map((e) => deps.inbound.get(deviceId, e.messageId)),
    );
    found.push(...records.filter((r): r is InboundRecord => r !== undefined));
  }
  return found.slice(0, limit);
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
