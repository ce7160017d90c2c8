--[[
  Marks that a send attempt of a message starts, and when (for the pacing of a sender that takes
  the device over); see MessageStore.claim. The batch's state is read here, in the script that
  starts the attempt: once a cancel's script ran, no message of the batch is claimed any more
  (whichever sender holds the device, before or after a failover), which is what lets the cancel
  answer "none of them will be sent". So is the device's pause: a pause that began while the
  message waited for its turn holds it. Claiming also ends the message's hold (`held`, and its
  place in the batch's held set).

  `sendingAt` marks an attempt under way (docs/architecture.md, "When a send began"): the attempt
  ends it as unsent (message-attempt-end-1.lua) when nothing of the message reached the socket, or
  leaves it and sets `sendBegan` when something may have. A claim that finds an earlier attempt's
  `sendingAt` still there (its process died mid-attempt, or could not record its end) cannot know
  whether that one wrote: it counts as begun (`sendBegan`), for good.

  Input:
    KEYS[1] record (keys.message)
    KEYS[2] WhatsApp-id mapping (keys.messageByPlatformId)
    KEYS[3] batch (keys.batch; the record key when the message is not of a batch)
    KEYS[4] the batch's held set (keys.batchHeld)
    KEYS[5] the device's pause (keys.deviceRestriction)
    KEYS[6] the device's last claim (keys.devicePace)

    ARGV[1] messageId
    ARGV[2] retention seconds
    ARGV[3] now (ms)
    ARGV[4] expiresAt (ms, or '')
    ARGV[5] base JSON: the record's fields from its job, set where missing
    ARGV[6] '1' when the message is of a batch
    ARGV[7] the last claim's TTL (s)

  Output:
    'claimed', or why not: 'moved' (to another device of its pool), 'failed', 'sent', 'deleted', 'cancelled' / 'paused' (its batch),
    'expired', 'restricted' (the device is paused)
]]
local rec, byWa, batch, held = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
-- Moved to another device of its pool (pool-release-4.lua): that device sends it, never this one.
if redis.call('HEXISTS', rec, 'movedTo') == 1 then return 'moved' end
local cur = redis.call('HGET', rec, 'status') or 'queued'
if cur == 'failed' then return 'failed' end
if cur ~= 'queued' and redis.call('HEXISTS', rec, 'sentAt') == 1 then return 'sent' end
-- Deleted while it waited (POST /send delete): never sent.
if cur == 'deleted' then return 'deleted' end
if ARGV[6] == '1' then
  local b = redis.call('HMGET', batch, 'cancelledAt', 'pausedAt')
  if b[1] then return 'cancelled' end
  if b[2] then return 'paused' end
end
if ARGV[4] ~= '' and tonumber(ARGV[3]) >= tonumber(ARGV[4]) then return 'expired' end
local pause = redis.call('HMGET', KEYS[5], 'reason', 'until')
if pause[1] and tonumber(pause[2] or '0') > tonumber(ARGV[3]) then return 'restricted' end
for k, v in pairs(cjson.decode(ARGV[5])) do redis.call('HSETNX', rec, k, v) end
redis.call('HSETNX', rec, 'status', 'queued')
if redis.call('HEXISTS', rec, 'sendingAt') == 1 then redis.call('HSET', rec, 'sendBegan', '1') end
redis.call('HSET', rec, 'sendingAt', ARGV[3])
redis.call('HDEL', rec, 'heldReason', 'heldUntil')
if ARGV[6] == '1' then redis.call('SREM', held, ARGV[1]) end
redis.call('EXPIRE', rec, tonumber(ARGV[2]))
redis.call('SET', byWa, ARGV[1], 'EX', tonumber(ARGV[2]))
redis.call('SET', KEYS[6], ARGV[3], 'EX', tonumber(ARGV[7]))
return 'claimed'
