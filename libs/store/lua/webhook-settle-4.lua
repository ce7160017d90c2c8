--[[
  Writes the end of a webhook attempt under the device's delivery lease (fenced: nothing is
  written unless the lease is still the caller's) and extends the lease: the outbox entry goes,
  and the event is either done (its retry forgotten) or due again at a time, with its record.

  Input:
    KEYS[1] lease: the delivery lease (see includes/lease.lua, 'token' form)
    KEYS[2] outbox: the device's event outbox stream
    KEYS[3] retries: sorted set of the events waiting for a retry, by when it is due (ms)
    KEYS[4] retry data: hash of event id -> the event and its attempts so far

    ARGV[1] owner: the notifier holding the lease
    ARGV[2] epoch: the epoch it took the lease at
    ARGV[3] TTL (ms) of the lease from now
    ARGV[4] the outbox entry's stream id ('' for a retry)
    ARGV[5] event id
    ARGV[6] when it is due again (ms), '' when done
    ARGV[7] the retry record (JSON), '' when done

  Output:
    1 when written, 0 when the lease is not the caller's (nothing written)
]]
--- @include "lease"
if not leaseIsMine('token', redis.call('GET', KEYS[1]), ARGV[1], ARGV[2]) then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
if ARGV[4] ~= '' then redis.call('XDEL', KEYS[2], ARGV[4]) end
if ARGV[6] == '' then
  redis.call('ZREM', KEYS[3], ARGV[5])
  redis.call('HDEL', KEYS[4], ARGV[5])
else
  redis.call('ZADD', KEYS[3], ARGV[6], ARGV[5])
  redis.call('HSET', KEYS[4], ARGV[5], ARGV[7])
end
return 1
