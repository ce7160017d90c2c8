--[[
  Renews a lease, or restores one that lapsed when nobody took it since: every take increments
  the epoch counter, so a counter still at the caller's epoch proves it, and the same lease (same
  epoch) is set again; there is nothing to fence.

  Input:
    KEYS[1] lease: the lease (see includes/lease.lua)
    KEYS[2] fence: the epoch counter

    ARGV[1] owner: the holder renewing it
    ARGV[2] epoch: the epoch it was taken at
    ARGV[3] TTL (ms) from now
    ARGV[4] the lease value's form: 'json' or 'token'

  Output:
    'renewed', 'restored' (it had lapsed; set again) or 'lost' (someone took it meanwhile)
]]
--- @include "lease"
local raw = redis.call('GET', KEYS[1])
if not raw then
  if tonumber(redis.call('GET', KEYS[2]) or '0') == tonumber(ARGV[2]) then
    redis.call('SET', KEYS[1], leaseValue(ARGV[4], ARGV[1], tonumber(ARGV[2])), 'PX', tonumber(ARGV[3]))
    return 'restored'
  end
  return 'lost'
end
if leaseIsMine(ARGV[4], raw, ARGV[1], ARGV[2]) then
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]))
  return 'renewed'
end
return 'lost'
