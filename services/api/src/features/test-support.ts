/**
 * TEST SUPPORT, not used by the API: the in-memory doubles the use cases' fast tests share across
 * capabilities (features/<cap>/<use-case>.test.ts), in one place outside every feature folder — a
 * feature imports another only through its index.ts, which the API loads, and these have no place
 * there. A test of a capability imports its own doubles from its folder, the others' from here.
 */
export {
  MemoryHolder,
  MemorySessions,
  said,
  type AskedCommand,
  type HolderAnswer,
} from './holder/memory-holder.js';
export { HOLDER_WAIT_SECONDS, type DeviceHolder } from './holder/ask-holder.js';
export { MemoryAcceptor, MemoryMessages } from './send/memory-send.js';
export { MemoryContactCache, MemoryLookupCap } from './contacts/memory-contacts.js';
export { MemoryRecords, inboundRecord, sentRecord } from './messages/memory-records.js';
export { MemoryRedis } from './memory-redis.js';
