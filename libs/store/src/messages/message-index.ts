import type { ChainableCommander } from 'ioredis';
import type { RedisClient } from '@mgw/common';
import { keys } from '@mgw/contracts';
import { storeScript } from '../lua.js';

/** Most ids a device's index keeps (the oldest go first); records themselves expire on their own. */
export const MESSAGE_INDEX_MAX = 200_000;

/**
 * Appends ids to the device's message index in order, each with the next number of the device's
 * sequence (a batch accepted in one millisecond still has a total order, so a cursor is one number):
 * `lua/message-index-2.lua`. Its Lua function `mgw_index` (`lua/includes/message-index.lua`, which
 * holds MESSAGE_INDEX_MAX) is included by the scripts that accept or record messages too.
 */
const INDEX = storeScript<number>('message-index-2');

/** One entry of the index: the message id and its place (the cursor of the page after it). */
export interface IndexEntry {
  messageId: string;
  seq: number;
}

/** An entry of a page read with its record's fields (`{}` when it has none). */
export interface IndexPageEntry extends IndexEntry {
  fields: Record<string, string>;
}

/** Reads a page of ids and their records in one round trip (`lua/message-index-page-1.lua`). */
const PAGE = storeScript<[number, ...(string | null)[]]>('message-index-page-1');

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
   * Adds accepted messages to the transaction that accepts them, by SHA: the transaction is one
   * of this index's connection (made after the constructor defined the script there).
   */
  stage(multi: ChainableCommander, deviceId: string, messageIds: string[]): void {
    const keyArgs = [keys.messageIndex(deviceId), keys.messageSeq(deviceId)];
    INDEX.queue(multi, keyArgs, [String(this.retentionSeconds), ...messageIds]);
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

  /**
   * Up to `count` entries older than `before` (a place), newest first, each with its record's
   * fields as stored (`{}` for a message still queued or one whose record expired), and whether
   * older entries follow: one round trip (the page script) instead of one command per record.
   */
  async page(
    deviceId: string,
    before: number | undefined,
    count: number,
  ): Promise<{ entries: IndexPageEntry[]; more: boolean }> {
    const [more, ...flat] = await PAGE.run(
      this.redis,
      [keys.messageIndex(deviceId)],
      [keys.message(deviceId, ''), before === undefined ? '+inf' : `(${before}`, String(count)],
    );
    const entries: IndexPageEntry[] = [];
    for (let at = 0; at + 3 <= flat.length; at += 3) {
      const record = flat[at + 2];
      entries.push({
        messageId: String(flat[at]),
        seq: Number(flat[at + 1]),
        fields: (record ? JSON.parse(record) : {}) as Record<string, string>,
      });
    }
    return { entries, more: more === 1 };
  }

  /** Drops ids whose records expired. */
  async forget(deviceId: string, messageIds: string[]): Promise<void> {
    if (messageIds.length) await this.redis.zrem(keys.messageIndex(deviceId), ...messageIds);
  }
}
