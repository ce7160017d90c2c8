--[[
  Gives a device's webhook delivery lease back when it is still the caller's and the device has no
  work left (or in any case when forced, e.g. at shutdown). Checked in one step with the release:
  an event written between "nothing left" and the release is never stranded without a notifier.

  Input:
    KEYS[1] lease: the delivery lease (see includes/lease.lua, 'token' form)
    KEYS[2] outbox: the device's event outbox stream
    KEYS[3] retries: sorted set of the events waiting for a retry, by when it is due (ms)

    ARGV[1] owner: the notifier holding it
    ARGV[2] epoch: the epoch it took the lease at
    ARGV[3] now (ms): retries due by then are work
    ARGV[4] force: '1' gives it back even with work left

  Output:
    {'released', when the earliest retry is due (ms) or ''} | {'busy', ''} | {'lost', ''}
]]
--- @include "lease"
--- @include "webhook-has-work"
if not leaseIsMine('token', redis.call('GET', KEYS[1]), ARGV[1], ARGV[2]) then return {'lost', ''} end
if ARGV[4] ~= '1' and hasWork(KEYS[2], KEYS[3], ARGV[3]) then return {'busy', ''} end
redis.call('DEL', KEYS[1])
local first = redis.call('ZRANGE', KEYS[3], 0, 0, 'WITHSCORES')
return {'released', first[2] or ''}
