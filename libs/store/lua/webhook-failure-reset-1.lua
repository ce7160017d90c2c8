--[[
  Resets the failures in a row of a device's webhook after a delivery went through, only on an
  endpoint that still exists: a late attempt must not re-create a removed endpoint's hash.

  Input:
    KEYS[1] webhook: the device's webhook hash (keys.webhook)

  Output:
    0
]]
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('HSET', KEYS[1], 'failures', '0') end
return 0
