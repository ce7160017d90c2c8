--[[
  Extends a lease while it is still the caller's (same owner, same epoch). One step: a plain GET
  then PEXPIRE races with a takeover between the two commands.

  Input:
    KEYS[1] lease: the lease (see includes/lease.lua)

    ARGV[1] owner: the holder renewing it
    ARGV[2] epoch: the epoch it was taken at
    ARGV[3] TTL (ms) from now
    ARGV[4] the lease value's form: 'json' or 'token'

  Output:
    'renewed' (still ours, TTL extended), 'lost' (someone else's now) or 'missing' (expired)
]]
--- @include "lease"
local raw = redis.call('GET', KEYS[1])
if not raw then return 'missing' end
if leaseIsMine(ARGV[4], raw, ARGV[1], ARGV[2]) then
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]))
  return 'renewed'
end
return 'lost'
