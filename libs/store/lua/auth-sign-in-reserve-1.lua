--[[
  Reserves one admin sign-in attempt of a client IP in a fixed window that starts at its first
  attempt: refused when `limit` attempts are already counted, so parallel guesses cannot outrun
  the count.

  Input:
    KEYS[1] counter: the IP's attempts in this window (keys.adminSignInFailures)

    ARGV[1] window (ms)
    ARGV[2] limit: attempts per window

  Output:
    {blocked (1) or reserved (0), window left in ms}
]]
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
local ttl = redis.call('PTTL', KEYS[1])
if n >= tonumber(ARGV[2]) and ttl > 0 then return {1, ttl} end
n = redis.call('INCR', KEYS[1])
if n == 1 or ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {0, ttl}
