--[[
  Whether one process of a liveness set is alive now: its entry expires at or after the Redis
  clock's now.

  Input:
    KEYS[1] set: the liveness set (owner -> expiry ms, Redis clock)

    ARGV[1] owner: the process's id

  Output:
    1 when alive, else 0
]]
--- @include "now"
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if score and tonumber(score) >= nowMs() then return 1 end
return 0
