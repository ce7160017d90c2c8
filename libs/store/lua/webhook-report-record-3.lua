--[[
  Records how a webhook attempt ended in the device's delivery report (what the dashboard's Events
  tab shows), under the device's delivery lease (fenced: a notifier that lost its lease records
  nothing, as it settles nothing) and only while the endpoint exists (a late attempt must not
  re-create a removed endpoint's report). The report expires `ttl` seconds after its last write.

  Input:
    KEYS[1] lease: the delivery lease (see includes/lease.lua, 'token' form)
    KEYS[2] webhook: the device's webhook hash (keys.webhook)
    KEYS[3] report: the device's webhook report hash (`…:webhook:report`)

    ARGV[1] owner: the notifier holding the lease
    ARGV[2] epoch: the epoch it took the lease at
    ARGV[3] the attempt's facts (JSON: at, eventId, type, outcome, attempt, status?, error?)
    ARGV[4] kind: 'delivered' | 'failed' | 'other' (not an attempt: no endpoint to try)
    ARGV[5] '1' when the event was dropped after its last attempt (counted in `exhausted`)
    ARGV[6] TTL of the report (seconds)

  Output:
    1 when written, 0 when the lease is not the caller's or the endpoint is gone
]]
--- @include "lease"
if not leaseIsMine('token', redis.call('GET', KEYS[1]), ARGV[1], ARGV[2]) then return 0 end
if redis.call('EXISTS', KEYS[2]) == 0 then return 0 end
redis.call('HSET', KEYS[3], 'last', ARGV[3])
if ARGV[4] == 'delivered' then
  redis.call('HSET', KEYS[3], 'delivered', ARGV[3])
elseif ARGV[4] == 'failed' then
  redis.call('HSET', KEYS[3], 'failed', ARGV[3])
end
if ARGV[5] == '1' then redis.call('HINCRBY', KEYS[3], 'exhausted', 1) end
redis.call('EXPIRE', KEYS[3], ARGV[6])
return 1
