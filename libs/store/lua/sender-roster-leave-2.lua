--[[
  A sender leaves the roster at once (shutdown), so the others' shares grow without waiting for its
  liveness to run out.

  Input:
    KEYS[1] roster: sorted set, sender -> when its liveness expires (ms) (keys.senders)
    KEYS[2] loads: hash, sender -> devices it holds (keys.senderLoads)

    ARGV[1] the sender (its lease owner)

  Output:
    1
]]
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
return 1
