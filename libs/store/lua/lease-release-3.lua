--[[
  Compare-and-delete: gives a lease back only while it is still the caller's (a slow shutdown must
  not delete a lease that already moved on). The epoch counter moves on too, so a renewal round
  still in flight cannot restore the released lease. With a target, the lease is reserved for it
  (a directed hand-over, `{to, at}` JSON with `at` on the Redis clock) in the same step.

  Input:
    KEYS[1] lease: the lease (see includes/lease.lua)
    KEYS[2] reservation: the hand-over to write when there is a target
    KEYS[3] fence: the epoch counter

    ARGV[1] owner: the holder releasing it
    ARGV[2] epoch: the epoch it was taken at
    ARGV[3] the lease value's form: 'json' or 'token'
    ARGV[4] target owner of a hand-over, or '' / absent for none
    ARGV[5] how long (ms) the hand-over reserves the lease

  Output:
    1 when the lease was the caller's and is gone, else 0
]]
--- @include "lease"
--- @include "now"
local raw = redis.call('GET', KEYS[1])
if not raw then return 0 end
if leaseIsMine(ARGV[3], raw, ARGV[1], ARGV[2]) then
  redis.call('DEL', KEYS[1])
  redis.call('INCR', KEYS[3])
  if ARGV[4] and ARGV[4] ~= '' then
    redis.call('SET', KEYS[2], cjson.encode({to = ARGV[4], at = nowMs()}), 'PX', tonumber(ARGV[5]))
  end
  return 1
end
return 0
