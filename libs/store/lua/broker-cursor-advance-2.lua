--[[
  Moves a device's broker cursor on, under the (transport, device) broker lease: only the holder
  that took the lease at `epoch` may write, so a notifier that lost it (paused past the TTL while
  another took over) never moves the cursor back or past what it did not publish. The lease's TTL
  is extended in the same step.

  Input:
    KEYS[1] the broker lease (`keys.brokerLease`, token form `<owner>:<epoch>`)
    KEYS[2] the cursor hash (`keys.brokerCursor`)

    ARGV[1] owner
    ARGV[2] epoch
    ARGV[3] lease TTL (ms) from now
    ARGV[4] the new cursor: the last stream entry id published or passed over
    ARGV[5] its ordinal in the log's history ('' when unknown)

  Output:
    1 written, 0 the lease is not (or no longer) the caller's
]]
--- @include "lease"
local raw = redis.call('GET', KEYS[1])
if not leaseIsMine('token', raw, ARGV[1], ARGV[2]) then return 0 end
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]))
if ARGV[5] ~= '' then
  redis.call('HSET', KEYS[2], 'id', ARGV[4], 'ord', ARGV[5])
else
  redis.call('HSET', KEYS[2], 'id', ARGV[4])
  redis.call('HDEL', KEYS[2], 'ord')
end
return 1
