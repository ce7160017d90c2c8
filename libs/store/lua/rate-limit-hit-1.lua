--[[
  Counts one hit in a fixed window with rate-limit-redis's rule: a counter that has expired (or
  never existed) starts a new window of `windowMs` at this hit. The accept script counts a /send
  request's hit the same way when it writes the request's messages.

  Input:
    KEYS[1] counter: the token's count in this window (keys.sendRateLimit)

    ARGV[1] windowMs: the window (ms)

  Output:
    {total, ms left in the window}
]]
local ttl = redis.call("PTTL", KEYS[1])
if ttl <= 0 then
  redis.call("SET", KEYS[1], 1, "PX", ARGV[1])
  return { 1, tonumber(ARGV[1]) }
end
return { redis.call("INCR", KEYS[1]), ttl }
