--[[
  Gives back the attempt a successful admin sign-in reserved, only on a counter that still exists:
  a DECR after the window ended would leave -1 without expiry.

  Input:
    KEYS[1] counter: the IP's attempts in this window (keys.adminSignInFailures)

  Output:
    nil
]]
if tonumber(redis.call('GET', KEYS[1]) or '0') > 0 then redis.call('DECR', KEYS[1]) end
