--[[
  "Retry now": makes every event of the device waiting for a webhook retry due at once, keeping
  their order. Every score moves back by the same amount (the latest lands on `now`), so the
  notifier reads them in the order they had (the earliest due first) and delivers them as usual;
  nothing is added or duplicated. Recorded in the report (`retryNowAt`, `retryNowCount`). Only
  while the endpoint exists.

  Input:
    KEYS[1] retries: sorted set of the events waiting for a retry, by when it is due (ms)
    KEYS[2] webhook: the device's webhook hash (keys.webhook)
    KEYS[3] report: the device's webhook report hash (`…:webhook:report`)

    ARGV[1] now (ms)
    ARGV[2] now as an ISO time (recorded)
    ARGV[3] TTL of the report (seconds)

  Output:
    {events waiting, of those the ones that were not due yet}, or {-1, 0} without an endpoint
]]
if redis.call('EXISTS', KEYS[2]) == 0 then return {-1, 0} end
local now = tonumber(ARGV[1])
local all = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
local n = #all / 2
local later = redis.call('ZCOUNT', KEYS[1], '(' .. ARGV[1], '+inf')
if later > 0 then
  local shift = tonumber(all[#all]) - now
  for i = 1, #all, 2 do
    redis.call('ZADD', KEYS[1], tonumber(all[i + 1]) - shift, all[i])
  end
end
redis.call('HSET', KEYS[3], 'retryNowAt', ARGV[2], 'retryNowCount', tostring(later))
redis.call('EXPIRE', KEYS[3], ARGV[3])
return {n, later}
