--[[
  Counts one failed authentication (a wrong API token) of a client IP, in a fixed window that
  starts at its first failure; an IP already at the limit is not counted further.

  Input:
    KEYS[1] counter: the IP's failures in this window (keys.rateLimitPrefix('auth-failures') + IP)

    ARGV[1] window (ms)
    ARGV[2] limit: failures per window

  Output:
    {failures, window left in ms, blocked (1) or not (0)}
]]
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
local ttl = redis.call('PTTL', KEYS[1])
if n >= tonumber(ARGV[2]) and ttl > 0 then
  return {n, ttl, 1}
end
n = redis.call('INCR', KEYS[1])
if n == 1 or ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {n, ttl, 0}
