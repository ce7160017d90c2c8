--[[
  One admission of a device socket open by the host-wide token bucket the senders of one host
  (or of the whole install: the scope is the key) share, so a restart of every sender does not
  open thousands of WhatsApp sockets at once. The bucket refills at `rate` tokens a second up to
  `burst` on Redis's clock (hosts with skewed clocks share one bucket); an open takes one token,
  or is told how long until one is there. Read, refill and take are one step: two senders never
  take the same token.

  Input:
    KEYS[1] bucket: hash {tokens, at} (keys.connectBucket)

    ARGV[1] rate: tokens a second (> 0)
    ARGV[2] burst: most tokens kept (>= 1)

  Output:
    0 when a token was taken, else the ms until one will be there (>= 1)
]]
--- @include "now"
local now = nowMs()
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1]) or burst
local at = tonumber(state[2]) or now
if now > at then tokens = math.min(burst, tokens + (now - at) * rate / 1000) end
-- A full bucket needs burst / rate seconds to refill: after that the key says nothing new.
local ttl = math.ceil(burst * 1000 / rate) + 1000
if tokens >= 1 then
  redis.call('HSET', KEYS[1], 'tokens', tostring(tokens - 1), 'at', now)
  redis.call('PEXPIRE', KEYS[1], ttl)
  return 0
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', now)
redis.call('PEXPIRE', KEYS[1], ttl)
return math.max(1, math.ceil((1 - tokens) * 1000 / rate))
