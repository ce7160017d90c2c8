/**
 * The Lua scripts of the message store. Each runs atomically on keys of one device (one hash
 * tag), which is what makes "settle exactly once" and "expire only if unclaimed" hold under
 * concurrent senders, receipts and API calls; the same logic as GET-then-SET would race.
 */

/**
 * KEYS: record, content, device queue stats. ARGV: target status, its rank, ranks JSON, retention
 * seconds, fields JSON (set with the status), base JSON (the record's fields from its job, set
 * where missing), settle ('1': this is the message's final outcome as the sender sees it),
 * requireUnclaimed ('1': refuse (-1) when a send attempt already started).
 * Returns 1 when the record changed, 0 when not, -1 when refused as claimed.
 */
export const TRANSITION_SCRIPT = `
local rec, content, stats = KEYS[1], KEYS[2], KEYS[3]
local target, rank, ranks = ARGV[1], tonumber(ARGV[2]), cjson.decode(ARGV[3])
local retention = tonumber(ARGV[4])
if ARGV[8] == '1' and redis.call('HEXISTS', rec, 'sendingAt') == 1 then return -1 end
local cur = redis.call('HGET', rec, 'status') or 'queued'
local changed = 0
local function apply(withStatus)
  if withStatus then redis.call('HSET', rec, 'status', target) end
  for k, v in pairs(cjson.decode(ARGV[5])) do redis.call('HSET', rec, k, v) end
  changed = 1
end
if cur == 'failed' then
  -- final: nothing moves a message out of failed
elseif target == 'failed' then
  if cur == 'queued' then apply(true) end
elseif ranks[cur] >= rank then
  -- A receipt can overtake the sender's own bookkeeping (it waits for the server ack): the record
  -- is already delivered/read, and the late "sent" only adds its sentAt.
  if target == 'sent' and redis.call('HEXISTS', rec, 'sentAt') == 0 then apply(false) end
else
  apply(true)
end
if changed == 1 or ARGV[7] == '1' then
  for k, v in pairs(cjson.decode(ARGV[6])) do redis.call('HSETNX', rec, k, v) end
  redis.call('EXPIRE', rec, retention)
end
-- The message leaves the device's queue once, whatever its status became: quota back, and the
-- content (with its attachment bytes) released with the request's last message.
if ARGV[7] == '1' and redis.call('HSETNX', rec, 'settled', '1') == 1 then
  if redis.call('HINCRBY', stats, 'messages', -1) < 0 then redis.call('HSET', stats, 'messages', 0) end
  if redis.call('EXISTS', content) == 1 then
    local left = redis.call('HINCRBY', content, 'remaining', -1)
    if left <= 0 then
      local bytes = tonumber(redis.call('HGET', content, 'bytes') or '0')
      if redis.call('HINCRBY', stats, 'bytes', -bytes) < 0 then redis.call('HSET', stats, 'bytes', 0) end
      redis.call('DEL', content)
    end
  end
end
return changed
`;

/**
 * KEYS: record, WhatsApp-id mapping. ARGV: messageId, retention seconds, now (ms), expiresAt (ms
 * or ''), base JSON. Marks that a send attempt starts; see MessageStore.claim.
 */
export const CLAIM_SCRIPT = `
local rec, byWa = KEYS[1], KEYS[2]
local cur = redis.call('HGET', rec, 'status') or 'queued'
if cur == 'failed' then return 'failed' end
if cur ~= 'queued' and redis.call('HEXISTS', rec, 'sentAt') == 1 then return 'sent' end
if ARGV[4] ~= '' and tonumber(ARGV[3]) >= tonumber(ARGV[4]) then return 'expired' end
for k, v in pairs(cjson.decode(ARGV[5])) do redis.call('HSETNX', rec, k, v) end
redis.call('HSETNX', rec, 'status', 'queued')
redis.call('HSET', rec, 'sendingAt', ARGV[3])
redis.call('EXPIRE', rec, tonumber(ARGV[2]))
redis.call('SET', byWa, ARGV[1], 'EX', tonumber(ARGV[2]))
return 'claimed'
`;
