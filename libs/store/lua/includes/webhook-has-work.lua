--[[
  Whether a device has webhook work: an event waiting in its outbox (a first attempt) or a retry
  due by `now`.

  Defines:
    hasWork(outbox, retries, now) -> boolean
]]
local function hasWork(outbox, retries, now)
  if redis.call('XLEN', outbox) > 0 then return true end
  return #redis.call('ZRANGEBYSCORE', retries, '-inf', now, 'LIMIT', 0, 1) > 0
end
