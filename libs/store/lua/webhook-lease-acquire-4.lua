--[[
  Takes a device's webhook delivery lease (a lease with fencing in its 'token' form,
  `<notifier>:<epoch>`, see includes/lease.lua) when it is free and the device has work, both
  checked in the same step as the take: a device without work is never held, and one that gets
  work after "idle" was answered is told to the notifiers again by its event.

  Input:
    KEYS[1] lease: the delivery lease
    KEYS[2] fence: its epoch counter
    KEYS[3] outbox: the device's event outbox stream
    KEYS[4] retries: sorted set of the events waiting for a retry, by when it is due (ms)

    ARGV[1] owner: the notifier taking it
    ARGV[2] TTL (ms) of the lease
    ARGV[3] now (ms): retries due by then are work

  Output:
    {'acquired', token} | {'held', the lease's TTL left (ms)} | {'idle', 0}
]]
--- @include "lease"
--- @include "webhook-has-work"
local ttl = redis.call('PTTL', KEYS[1])
if ttl >= 0 then return {'held', ttl} end
if ttl == -1 then redis.call('DEL', KEYS[1]) end
if not hasWork(KEYS[3], KEYS[4], ARGV[3]) then return {'idle', 0} end
local epoch = leaseTake(KEYS[1], KEYS[2], 'token', ARGV[1], ARGV[2])
return {'acquired', leaseValue('token', ARGV[1], epoch)}
