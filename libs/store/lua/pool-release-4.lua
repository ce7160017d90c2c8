--[[
  Takes a pooled message off a device that dropped out of its pool, so that another device of the
  pool sends it: the one step that decides which device sends it. It succeeds only while the
  message is queued and its send never began here: no attempt may have handed it to the socket
  (`sendBegan`) and none is under way (`sendingAt`; docs/architecture.md, "When a send began").
  An attempt that ended before the socket (not connected, closed before the write, refused by
  WhatsApp with an error ack) left neither. From then on the claim and every status change of this
  device refuse the message (`movedTo` on its record), so it is sent by the device it moved to or
  not at all. The message leaves this device's queue count and this device's
  share of the batch's counts; its content stays until the move ends (pool-content-release-3.lua),
  since the other device's copy is read from it.

  Input:
    KEYS[1] record (keys.message)
    KEYS[2] the batch's counts on this device (keys.batch)
    KEYS[3] the batch's held set on this device (keys.batchHeld)
    KEYS[4] the device's queue stats (keys.deviceQueue)

    ARGV[1] messageId
    ARGV[2] the device it moves to
    ARGV[3] retention seconds
    ARGV[4] '1' when it is a scheduled send (counted in the batch's `scheduled`), else '0'

  Output:
    'released' (now or by an earlier call: a repeat), 'taken' (this device sends it or it ended),
    or 'busy' (an attempt is under way here: its end decides; ask again later)
]]
local rec, batch, held, stats = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
if redis.call('HEXISTS', rec, 'movedTo') == 1 then return 'released' end
local cur = redis.call('HGET', rec, 'status')
if (cur and cur ~= 'queued') or redis.call('HEXISTS', rec, 'sendBegan') == 1 then return 'taken' end
if redis.call('HEXISTS', rec, 'sendingAt') == 1 then return 'busy' end
-- `settled`: no later transition here gives its quota back a second time.
redis.call('HSET', rec, 'movedTo', ARGV[2], 'settled', '1')
redis.call('HDEL', rec, 'heldReason', 'heldUntil')
redis.call('EXPIRE', rec, tonumber(ARGV[3]))
if redis.call('HINCRBY', stats, 'messages', -1) < 0 then redis.call('HSET', stats, 'messages', 0) end
if redis.call('EXISTS', batch) == 1 then
  redis.call('HINCRBY', batch, 'total', -1)
  redis.call('HINCRBY', batch, ARGV[4] == '1' and 'scheduled' or 'queued', -1)
  redis.call('SREM', held, ARGV[1])
end
return 'released'
