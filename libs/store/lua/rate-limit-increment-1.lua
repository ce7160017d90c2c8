--[[
  Adds a turn's hits of one client to its rate-limit counter in one call, with rate-limit-redis's
  window: a counter that has expired (or never existed) starts a new window of `windowMs` at this
  call.

  Input:
    KEYS[1] counter: the client's count in this window (keys.rateLimitPrefix(endpoint) + client)

    ARGV[1] windowMs: the window (ms)
    ARGV[2] hits: the hits to add

  Output:
    {total, ms left in the window}
]]
local windowMs = tonumber(ARGV[1])
local hits = tonumber(ARGV[2])
local ttl = redis.call("PTTL", KEYS[1])
if ttl <= 0 then
  redis.call("SET", KEYS[1], hits, "PX", windowMs)
  return { hits, windowMs }
end
return { redis.call("INCRBY", KEYS[1], hits), ttl }
