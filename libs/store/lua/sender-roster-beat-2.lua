--[[
  One beat of a live sender: it is alive until now + TTL (Redis clock) and holds `held` devices.
  Senders whose liveness ran out leave the roster; the answer is the live ones and their loads.

  Input:
    KEYS[1] roster: sorted set, sender -> when its liveness expires (ms) (keys.senders)
    KEYS[2] loads: hash, sender -> devices it holds (keys.senderLoads)

    ARGV[1] the sender (its lease owner)
    ARGV[2] TTL (ms) of its liveness
    ARGV[3] held: the devices it holds

  Output:
    {live senders, their loads (in that order; nil where none is known)}
]]
--- @include "now"
local now = nowMs()
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
for _, dead in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now)) do
  redis.call('ZREM', KEYS[1], dead)
  redis.call('HDEL', KEYS[2], dead)
end
local live = redis.call('ZRANGE', KEYS[1], 0, -1)
return {live, redis.call('HMGET', KEYS[2], unpack(live))}
