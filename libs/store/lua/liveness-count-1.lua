--[[
  How many processes of a liveness set are alive now: entries expiring at or after the Redis
  clock's now (the reader's own clock does not matter).

  Input:
    KEYS[1] set: the liveness set (owner -> expiry ms, Redis clock)

  Output:
    the number of live entries
]]
--- @include "now"
return redis.call('ZCOUNT', KEYS[1], nowMs(), '+inf')
