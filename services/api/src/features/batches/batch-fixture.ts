import type { BatchRecord, MessageRecord } from '@mgw/contracts';
import { MemoryRedis } from '../test-support.js';
import type { DeviceBatchesDeps } from './list-device-batches.js';

/**
 * TEST SUPPORT, not used by the API (left out of the build): the Campaigns page's reads without an
 * API, for their fast tests (`<use-case>.test.ts` beside each) — the batch store faked over a list
 * the test fills, held messages and records in memory.
 */
export interface BatchFixture {
  redis: MemoryRedis;
  batches: BatchRecord[];
  records: Map<string, Partial<MessageRecord>>;
  d: DeviceBatchesDeps;
}

export function batchFixture(): BatchFixture {
  const redis = new MemoryRedis();
  const batches: BatchRecord[] = [];
  const records = new Map<string, Partial<MessageRecord>>();
  const d = {
    redis: redis.client,
    messages: { get: async (_d: string, id: string) => records.get(id) },
    batches: {
      list: async (_d: string, limit: number) => ({ batches: batches.slice(0, limit) }),
      get: async (_d: string, id: string) => batches.find((b) => b.batchId === id),
    },
  } as unknown as DeviceBatchesDeps;
  return { redis, batches, records, d };
}

/** A batch's record: its id, its size, how many of it are held. */
export const batch = (batchId: string, total: number, held = 0) =>
  ({ batchId, total, counts: { held } }) as unknown as BatchRecord;
