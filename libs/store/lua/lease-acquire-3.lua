--[[
  Takes a lease when nobody holds it ("SET NX PX + INCR epoch" in one step: the epoch is only
  consumed when the lease is really taken). A reservation (a directed hand-over, `{to, at}` JSON)
  keeps the lease for its target until it expires; the target takes it and ends the reservation.
  A lease held by one of the owners judged dead (their liveness expired) is taken over although
  its TTL has time left: the new epoch fences the old holder should it be alive after all.

  Input:
    KEYS[1] lease: the lease (see includes/lease.lua)
    KEYS[2] fence: the epoch counter
    KEYS[3] reservation: the hand-over reserving the lease for one owner, if any

    ARGV[1] owner: who takes the lease
    ARGV[2] TTL (ms) of the lease
    ARGV[3] the lease value's form: 'json' or 'token'
    ARGV[4..] owners judged dead, whose leases are taken over

  Output:
    {epoch, hand-over start ms or 0, the dead owner taken from or ''}; epoch 0 = not taken
]]
--- @include "lease"
local lease, fence, reservation = KEYS[1], KEYS[2], KEYS[3]
local owner, ttl, fmt = ARGV[1], ARGV[2], ARGV[3]
local raw = redis.call('GET', lease)
if raw then
  local holder = leaseHolder(fmt, raw)
  for i = 4, #ARGV do
    if ARGV[i] == holder then
      return {leaseTake(lease, fence, fmt, owner, ttl), 0, holder}
    end
  end
  return {0, 0, ''}
end
local handover = redis.call('GET', reservation)
local since = 0
if handover then
  local h = cjson.decode(handover)
  if h.to ~= owner then return {0, 0, ''} end
  since = tonumber(h.at) or 0
  redis.call('DEL', reservation)
end
return {leaseTake(lease, fence, fmt, owner, ttl), since, ''}
