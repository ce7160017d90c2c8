--[[
  Pauses, resumes or cancels a device's batch. One script: the state the control is checked against
  is the state it changes (a GET-then-HSET would let a cancel and a resume interleave and leave a
  cancelled batch `active`), and the event is written with the change (events.ts). The message
  claim script reads `cancelledAt` and `pausedAt` in the same slot, so once this ran no message of
  the batch starts a send (cancel) or until a resume (pause).

  Input:
    KEYS[1] batch (keys.batch)
    KEYS[2] webhook (keys.webhook)
    KEYS[3] event outbox (keys.eventOutbox)
    KEYS[4] event log (keys.eventLog): every event, wanted by the webhook or not

    ARGV[1] action: pause | resume | cancel
    ARGV[2] now (ISO 8601)
    ARGV[3] deviceId
    ARGV[4] batchId
    ARGV[5] events channel

  Output:
    a BatchControlOutcome: 'changed' | 'same' | 'missing' | 'completed' | 'cancelled'
]]
--- @include "event-emit"
local batch, hook, outbox = KEYS[1], KEYS[2], KEYS[3]
local action, now, deviceId, batchId, channel = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local b = redis.call('HMGET', batch, 'total', 'cancelledAt', 'completedAt', 'pausedAt')
if not b[1] then return 'missing' end
local function announce(etype, state, field)
  local seq = redis.call('HINCRBY', batch, 'controlSeq', 1)
  local d = { deviceId = deviceId, batchId = batchId, state = state }
  d[field] = now
  mgw_emit(hook, outbox, KEYS[4], channel, deviceId, batchId .. '.' .. action .. '.' .. seq, etype, now, cjson.encode(d))
  return 'changed'
end
if action == 'cancel' then
  if b[2] then return 'same' end
  if b[3] then return 'completed' end
  redis.call('HSET', batch, 'cancelledAt', now)
  redis.call('HDEL', batch, 'pausedAt')
  return announce('batch.cancelled', 'cancelled', 'cancelledAt')
end
if b[2] then return 'cancelled' end
if b[3] then return 'completed' end
if action == 'pause' then
  if b[4] then return 'same' end
  redis.call('HSET', batch, 'pausedAt', now)
  return announce('batch.paused', 'paused', 'pausedAt')
end
if not b[4] then return 'same' end
redis.call('HDEL', batch, 'pausedAt')
return announce('batch.resumed', 'active', 'resumedAt')
