--[[
  Gives one media object's room back to its device's media quota (deleted, or never stored
  because the store failed). Nothing when it is not in the quota (already released or expired).

  Input:
    KEYS[1] the device's media expiries (keys.mediaExpiries)
    KEYS[2] the device's media sizes (keys.mediaSizes)

    ARGV[1] mediaId

  Output:
    the bytes given back (0 when none)
]]
local size = redis.call('HGET', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[1], ARGV[1])
if not size then return 0 end
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('HINCRBY', KEYS[2], '_total', -tonumber(size))
return tonumber(size)
