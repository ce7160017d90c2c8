--[[
  Voids the locks of every job active in a send queue and marks each as stalled, so the next
  stalled check moves them back to waiting at once; the stalled check's throttle goes too. A job's
  lock is `<prefix><id>:lock`, in the queue's slot.

  Input:
    KEYS[1] active: the queue's active list
    KEYS[2] stalled: the queue's stalled set
    KEYS[3] stalled-check: the throttle of the stalled check

    ARGV[1] the queue's key prefix (`queue.toKey('')`)

  Output:
    how many jobs were active
]]
local ids = redis.call('LRANGE', KEYS[1], 0, -1)
for _, id in ipairs(ids) do
  redis.call('DEL', ARGV[1] .. id .. ':lock')
  redis.call('SADD', KEYS[2], id)
end
if #ids > 0 then redis.call('DEL', KEYS[3]) end
return #ids
