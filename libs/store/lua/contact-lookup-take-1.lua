--[[
  Counts numbers looked up at WhatsApp against a device's daily cap, all or none: the numbers are
  taken when the window's count stays within the cap. The window starts with its first take (the
  counter's TTL) and a refused take leaves the count as it is.

  Input:
    KEYS[1] counter: the window's count of looked-up numbers (keys.contactLookups)

    ARGV[1] numbers to take
    ARGV[2] cap: numbers per window
    ARGV[3] window (seconds), the TTL of a counter that has none

  Output:
    {1, count, ttl} when taken; {0, count, ttl} when the cap would be passed
    (count: the window's count after the call; ttl: seconds left in the window)
]]
local count = tonumber(redis.call('GET', KEYS[1]) or '0')
local want = tonumber(ARGV[1])
local ttl = redis.call('TTL', KEYS[1])
if ttl < 0 then ttl = tonumber(ARGV[3]) end
if count + want > tonumber(ARGV[2]) then return {0, count, ttl} end
count = redis.call('INCRBY', KEYS[1], want)
redis.call('EXPIRE', KEYS[1], ttl)
return {1, count, ttl}
