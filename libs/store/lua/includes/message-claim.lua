--[[
  A send attempt's claim (see message-claim-6.lua for what it means), in two parts, so that a
  script may do more between them in the same atomic step (message-claim-admit-8.lua takes the
  message's unit of the caps there): first every reason not to claim, then the claim's writes.

  Defines:
    mgw_claim_refusal(rec, batch, pause, now, expiresAt, ofBatch, once) -> why the message is not
      claimed ('moved', 'failed', 'sent', 'deleted', 'cancelled', 'paused', 'expired',
      'restricted', 'unknown'), or nil; it writes nothing
    mgw_claim_take(rec, byWa, held, pace, messageId, retention, now, base, ofBatch, paceTtl):
      the claim's writes
  (`now` and `expiresAt` are ARGV strings: ms, `expiresAt` '' for none; `ofBatch` is '1' for a
  message of a batch; `base` is the record's fields from its job, JSON; `once` is '1' for an engine
  with no idempotency key (the Cloud API): a message an earlier attempt may have handed to it —
  one under way or died mid-way (`sendingAt`), or begun (`sendBegan`) — is refused as 'unknown',
  never claimed for a second write.)
]]
local function mgw_claim_refusal(rec, batch, pause, now, expiresAt, ofBatch, once)
  -- Moved to another device of its pool (pool-release-4.lua): that device sends it, never this one.
  if redis.call('HEXISTS', rec, 'movedTo') == 1 then return 'moved' end
  local cur = redis.call('HGET', rec, 'status') or 'queued'
  if cur == 'failed' then return 'failed' end
  if cur ~= 'queued' and redis.call('HEXISTS', rec, 'sentAt') == 1 then return 'sent' end
  -- Deleted while it waited (POST /send delete): never sent.
  if cur == 'deleted' then return 'deleted' end
  if once == '1' and (redis.call('HEXISTS', rec, 'sendingAt') == 1 or redis.call('HEXISTS', rec, 'sendBegan') == 1) then
    return 'unknown'
  end
  if ofBatch == '1' then
    local b = redis.call('HMGET', batch, 'cancelledAt', 'pausedAt')
    if b[1] then return 'cancelled' end
    if b[2] then return 'paused' end
  end
  if expiresAt ~= '' and tonumber(now) >= tonumber(expiresAt) then return 'expired' end
  local p = redis.call('HMGET', pause, 'reason', 'until')
  if p[1] and tonumber(p[2] or '0') > tonumber(now) then return 'restricted' end
  return nil
end

local function mgw_claim_take(rec, byWa, held, pace, messageId, retention, now, base, ofBatch, paceTtl)
  for k, v in pairs(cjson.decode(base)) do redis.call('HSETNX', rec, k, v) end
  redis.call('HSETNX', rec, 'status', 'queued')
  if redis.call('HEXISTS', rec, 'sendingAt') == 1 then redis.call('HSET', rec, 'sendBegan', '1') end
  redis.call('HSET', rec, 'sendingAt', now)
  redis.call('HDEL', rec, 'heldReason', 'heldUntil')
  if ofBatch == '1' then redis.call('SREM', held, messageId) end
  redis.call('EXPIRE', rec, tonumber(retention))
  redis.call('SET', byWa, messageId, 'EX', tonumber(retention))
  redis.call('SET', pace, now, 'EX', tonumber(paceTtl))
end
