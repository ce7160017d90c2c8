--[[
  Counts a failed delivery attempt of a device's webhook, only on an endpoint that still exists: a
  late attempt must not re-create a removed endpoint's hash.

  Input:
    KEYS[1] webhook: the device's webhook hash (keys.webhook)

  Output:
    the failures in a row, 0 when the endpoint is gone
]]
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
return redis.call('HINCRBY', KEYS[1], 'failures', 1)
