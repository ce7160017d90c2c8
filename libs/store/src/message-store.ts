import type { Redis, ChainableCommander } from 'ioredis';
import { MESSAGE_STATUS_RANK, keys, type MessageRecord, type MessageStatus } from '@mgw/contracts';

/**
 * Message records (`keys.message` hashes, per device) shared by the API (creates, reads) and the sender
 * (marks sent / failed / delivered / read). Every write refreshes the retention TTL.
 * Status only moves forward (a late "delivered" receipt never overwrites "read"), except that
 * `failed` is final and nothing moves a message out of it.
 */
export class MessageStore {
  constructor(
    private readonly redis: Redis,
    private readonly retentionSeconds: number,
  ) {}

  /** Adds the `queued` records of new messages to a MULTI (so they land with the jobs' enqueue). */
  addQueued(multi: ChainableCommander, records: MessageRecord[]): void {
    for (const r of records) {
      multi.hset(keys.message(r.deviceId, r.messageId), flatten(r));
      multi.expire(keys.message(r.deviceId, r.messageId), this.retentionSeconds);
      multi.set(
        keys.messageByPlatformId(r.deviceId, r.platformMessageId),
        r.messageId,
        'EX',
        this.retentionSeconds,
      );
    }
  }

  async get(deviceId: string, messageId: string): Promise<MessageRecord | undefined> {
    const h = await this.redis.hgetall(keys.message(deviceId, messageId));
    if (!h.messageId) return undefined;
    return h as unknown as MessageRecord;
  }

  async findByPlatformId(deviceId: string, platformMessageId: string): Promise<string | undefined> {
    return (await this.redis.get(keys.messageByPlatformId(deviceId, platformMessageId))) ?? undefined;
  }

  async markSent(deviceId: string, messageId: string, sentAt: Date): Promise<boolean> {
    return this.advance(deviceId, messageId, 'sent', { sentAt: sentAt.toISOString() });
  }

  async markFailed(deviceId: string, messageId: string, error: string, at = new Date()): Promise<boolean> {
    return this.advance(deviceId, messageId, 'failed', { failedAt: at.toISOString(), error });
  }

  /** Applies a receipt; returns false when the record is unknown or already further along. */
  async markReceipt(
    deviceId: string,
    messageId: string,
    status: 'delivered' | 'read',
    at = new Date(),
  ): Promise<boolean> {
    const field = status === 'delivered' ? 'deliveredAt' : 'readAt';
    return this.advance(deviceId, messageId, status, { [field]: at.toISOString() });
  }

  private async advance(
    deviceId: string,
    messageId: string,
    status: MessageStatus,
    fields: Record<string, string>,
  ): Promise<boolean> {
    const key = keys.message(deviceId, messageId);
    const result = (await this.redis.eval(
      ADVANCE_SCRIPT,
      1,
      key,
      status,
      String(MESSAGE_STATUS_RANK[status]),
      String(this.retentionSeconds),
      JSON.stringify(fields),
      JSON.stringify(MESSAGE_STATUS_RANK),
    )) as number;
    return result === 1;
  }
}

/**
 * Moves a record forward only; `failed` is terminal; sent/delivered/read never become failed.
 * `sent` on a record a receipt already moved further only adds the missing `sentAt`.
 */
const ADVANCE_SCRIPT = `
local cur = redis.call('HGET', KEYS[1], 'status')
if not cur then return 0 end
local ranks = cjson.decode(ARGV[5])
local target = ARGV[1]
if cur == 'failed' then return 0 end
if target == 'failed' and cur ~= 'queued' then return 0 end
if target ~= 'failed' and ranks[cur] >= tonumber(ARGV[2]) then
  -- A receipt can overtake the sender's own bookkeeping (it waits for the server ack): the record
  -- is already delivered/read, but it still gets its sentAt.
  if target == 'sent' and redis.call('HEXISTS', KEYS[1], 'sentAt') == 0 then
    for k, v in pairs(cjson.decode(ARGV[4])) do redis.call('HSET', KEYS[1], k, v) end
    redis.call('EXPIRE', KEYS[1], tonumber(ARGV[3]))
    return 1
  end
  return 0
end
redis.call('HSET', KEYS[1], 'status', target)
for k, v in pairs(cjson.decode(ARGV[4])) do redis.call('HSET', KEYS[1], k, v) end
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[3]))
return 1
`;

function flatten(r: MessageRecord): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(r)) if (v !== undefined) out[k] = String(v);
  return out;
}
