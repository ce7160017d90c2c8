import type { ChainableCommander } from 'ioredis';
import { RedisScript, type RedisClient } from '@mgw/common';
import { keys } from '@mgw/contracts';

/** Most ids a device's index keeps (the oldest go first); records themselves expire on their own. */
export const MESSAGE_INDEX_MAX = 200_000;

/**
 * Lua: `mgw_index(indexKey, seqKey, retentionSeconds, ids...)` appends ids to the device's
 * message index in order, each with the next number of the device's sequence (a list accepted in
 * one millisecond still has a total order, so a cursor is one number).
 */
export const INDEX_LUA = `
local function mgw_index(index, seq, retention, ids)
  local n = #ids
  if n == 0 then return end
  local base = redis.call('INCRBY', seq, n) - n
  local args = {}
  for i, id in ipairs(ids) do
    args[#args + 1] = base + i
    args[#args + 1] = id
  end
  for i = 1, #args, 1000 do
    redis.call('ZADD', index, unpack(args, i, math.min(i + 999, #args)))
  end
  redis.call('ZREMRANGEBYRANK', index, 0, -${MESSAGE_INDEX_MAX + 1})
  redis.call('EXPIRE', index, retention)
  redis.call('EXPIRE', seq, retention)
end
`;

const INDEX_SCRIPT = `${INDEX_LUA}
local ids = {}
for i = 2, #ARGV do ids[#ids + 1] = ARGV[i] end
mgw_index(KEYS[1], KEYS[2], tonumber(ARGV[1]), ids)
return 0`;

const INDEX = new RedisScript<number>('mgwMessageIndex', INDEX_SCRIPT);

/** One entry of the index: the message id and its place (the cursor of the page after it). */
export interface IndexEntry {
  messageId: string;
  seq: number;
}

/**
 * The order of a device's messages for GET /messages: ids only (the records carry the rest and
 * expire on their own; an id whose record is gone is skipped and dropped when read).
 */
export class MessageIndex {
  constructor(
    private readonly redis: RedisClient,
    /** How long the index outlives its last entry. */
    readonly retentionSeconds: number,
  ) {
    INDEX.define(redis);
  }

  /**
   * Adds accepted messages to the transaction that accepts them: by SHA when the transaction is
   * one of this index's connection (the script is defined there), else with the script's text.
   */
  stage(multi: ChainableCommander, deviceId: string, messageIds: string[]): void {
    const keyArgs = [keys.messageIndex(deviceId), keys.messageSeq(deviceId)];
    const args = [String(this.retentionSeconds), ...messageIds];
    if (INDEX.name in multi) INDEX.queue(multi, keyArgs, args);
    else multi.eval(INDEX_SCRIPT, 2, ...keyArgs, ...args);
  }

  /** Up to `count` entries older than `before` (exclusive), newest first. */
  async before(deviceId: string, before: number | undefined, count: number): Promise<IndexEntry[]> {
    const max = before === undefined ? '+inf' : `(${before}`;
    const flat = await this.redis.zrevrangebyscore(
      keys.messageIndex(deviceId),
      max,
      '-inf',
      'WITHSCORES',
      'LIMIT',
      0,
      count,
    );
    const out: IndexEntry[] = [];
    for (let i = 0; i + 1 < flat.length; i += 2) out.push({ messageId: flat[i]!, seq: Number(flat[i + 1]) });
    return out;
  }

  /** Drops ids whose records expired. */
  async forget(deviceId: string, messageIds: string[]): Promise<void> {
    if (messageIds.length) await this.redis.zrem(keys.messageIndex(deviceId), ...messageIds);
  }
}
