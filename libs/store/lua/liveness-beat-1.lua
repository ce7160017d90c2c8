--[[
  One beat of a liveness set (a sorted set of process ids scored by when their liveness expires,
  on the Redis clock, so hosts with skewed clocks still agree): writes this process's expiry
  (unless it does not beat: a hung process lets its entry run out), forgets the entries expired
  longer than a grace (their holders are long gone) and answers the Redis time with the entries
  that have expired.

  Input:
    KEYS[1] set: the liveness set

    ARGV[1] owner: this process's id
    ARGV[2] TTL (ms): a beat keeps the owner live this long
    ARGV[3] forget (ms): entries expired at least this long ago are dropped (1: every expired one)
    ARGV[4] beat: '1' writes this owner's expiry, '0' only looks

  Output:
    {now (ms, Redis clock), the owners whose liveness has expired (kept ones only)}
]]
--- @include "now"
local now = nowMs()
if ARGV[4] == '1' then redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1]) end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[3]))
return {now, redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now)}
