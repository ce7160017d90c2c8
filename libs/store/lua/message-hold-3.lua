--[[
  Records why a queued message waits (`heldReason`, `heldUntil`) and adds it to its batch's held
  set; nothing for a message that left `queued` (it is sent or failed: not held) or moved to
  another device of its pool. A `batch_paused`
  hold of a batch that is no longer paused is refused too (a resume ran meanwhile: the message goes
  on instead). A hold never ends a send attempt: the attempt records its own end first
  (message-attempt-end-1.lua).

  Input:
    KEYS[1] record (keys.message)
    KEYS[2] batch (keys.batch; the record key when the message is not of a batch)
    KEYS[3] the batch's held set (keys.batchHeld)

    ARGV[1] messageId
    ARGV[2] reason
    ARGV[3] until (ISO 8601)
    ARGV[4] retention seconds
    ARGV[5] '1' when the message is of a batch

  Output:
    1 when held, 0 when not
]]
local rec, batch, held = KEYS[1], KEYS[2], KEYS[3]
local cur = redis.call('HGET', rec, 'status') or 'queued'
if cur ~= 'queued' or redis.call('HEXISTS', rec, 'movedTo') == 1 then return 0 end
if ARGV[2] == 'batch_paused' and redis.call('HEXISTS', batch, 'pausedAt') == 0 then return 0 end
redis.call('HSET', rec, 'heldReason', ARGV[2], 'heldUntil', ARGV[3])
redis.call('EXPIRE', rec, tonumber(ARGV[4]))
if ARGV[5] == '1' and redis.call('EXISTS', batch) == 1 then
  redis.call('SADD', held, ARGV[1])
  redis.call('EXPIRE', held, tonumber(ARGV[4]))
end
return 1
