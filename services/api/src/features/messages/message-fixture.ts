import { keys, type MediaObject } from '@mgw/contracts';
import { MemoryRedis } from '../test-support.js';
import type { MessageDeps } from './get-message.js';
import { MemoryRecords } from './memory-records.js';

/**
 * TEST SUPPORT, not used by the API (left out of the build): reading messages (GET /messages/:id,
 * GET /messages) without an API, for the fast tests beside each use case — the records in memory,
 * the device's phone <-> LID map in an in-memory Redis (as the sender keeps it: `p:<phone>` -> LID,
 * `l:<lid>` -> phone), and the stores of what is shown beside a record (edits, kinds, media, a
 * pool's owners) answering as the test fills them.
 */
export const deviceId = 'rm-1';
/** The LID of the device's contact 15550001234. */
export const lid = '998877665544@lid';

export function messageFixture() {
  const records = new MemoryRecords();
  const redis = new MemoryRedis();
  redis.hash(keys.contactIdentities(deviceId), {
    'p:15550001234': '998877665544',
    'l:998877665544': '15550001234',
  });
  const edits = new Map<
    string,
    { edits?: { text: string; at: string }[]; text?: string; deletedAt?: string }
  >();
  const objects = new Map<string, MediaObject>();
  const owners = new Map<string, string>();
  const deps: MessageDeps = {
    messages: records.messages,
    inbound: records.inbound,
    encryption: records.encryption,
    redis: redis.client,
    revisions: { view: async (_d, id) => edits.get(id) ?? {} },
    kinds: { read: async (_d, id, h) => (h?.record && id.startsWith('out') ? {} : {}) },
    media: { show: async (d, id) => (objects.get(id)?.deviceId === d ? objects.get(id) : undefined) },
    poolBatches: { owner: async (poolId, id) => owners.get(`${poolId}\n${id}`) },
  };
  return { records, redis, edits, objects, owners, deps };
}
export type MessageFixture = ReturnType<typeof messageFixture>;
