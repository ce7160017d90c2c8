import type { RedisClient } from '@mgw/common';
import { isChannelJid, keys, type BatchRecord, type HeldInfo, type HeldReason } from '@mgw/contracts';
import { someHeldMessageIds, type BatchStore, type MessageStore } from '@mgw/store';

export interface DeviceBatchesDeps {
  redis: RedisClient;
  messages: MessageStore;
  batches: BatchStore;
}

/** How many of a list's held messages the page reads to say why they wait. */
const HELD_SAMPLE = 5;

/**
 * A list as the Campaigns page shows it: the public record, plus why its held messages wait when
 * some are — the reasons found on a few of them (up to HELD_SAMPLE, read at random), each with the
 * earliest `until` among them. A sample, not a census: a list held for two reasons at once may show one.
 */
export type DashboardBatch = BatchRecord & { heldReasons?: HeldInfo[]; broadcast?: 'status' | 'channel' };

async function withHeldReasons(
  d: DeviceBatchesDeps,
  deviceId: string,
  batch: BatchRecord,
): Promise<DashboardBatch> {
  if (batch.counts.held === 0) return batch;
  const ids = await someHeldMessageIds(d.redis, deviceId, batch.batchId, HELD_SAMPLE);
  const records = await Promise.all(ids.map((id) => d.messages.get(deviceId, id)));
  const byReason = new Map<HeldReason, string>();
  for (const held of records.map((r) => r?.held)) {
    if (!held) continue;
    const seen = byReason.get(held.reason);
    if (!seen || held.until < seen) byReason.set(held.reason, held.until);
  }
  if (byReason.size === 0) return batch;
  const heldReasons = [...byReason].map(([reason, until]) => ({ reason, until }));
  return { ...batch, heldReasons: heldReasons.sort((a, b) => a.until.localeCompare(b.until)) };
}

/**
 * The device's lists, newest first, a page at a time: the public GET /batches's page (the same
 * store call), each list with its `heldReasons` when it has held messages.
 */
export async function listDeviceBatches(
  d: DeviceBatchesDeps,
  deviceId: string,
  limit: number,
  cursor: string | undefined,
) {
  const page = await d.batches.list(deviceId, limit, cursor);
  const batches = await Promise.all(page.batches.map((b) => withHeldReasons(d, deviceId, b)));
  // A status update or a channel post is a list of one named by its message (docs/broadcasts.md):
  // labelled so, by the message's recipient.
  const kinds = await Promise.all(
    batches.map((b) => (b.total === 1 ? broadcastOf(d, deviceId, b) : undefined)),
  );
  return {
    ...page,
    batches: batches.map((b, i): DashboardBatch => {
      const broadcast = kinds[i];
      return broadcast ? { ...b, broadcast } : b;
    }),
  };
}

async function broadcastOf(
  d: DeviceBatchesDeps,
  deviceId: string,
  batch: BatchRecord,
): Promise<DashboardBatch['broadcast']> {
  if (await d.redis.exists(keys.statusRecord(deviceId, batch.batchId))) return 'status';
  // Its record, or its job while it is queued or scheduled (no record yet).
  const message = await d.messages.get(deviceId, batch.batchId);
  return message && isChannelJid(message.to) ? 'channel' : undefined;
}
