--[[
  Records a failed broker publish of a device's events (what the dashboard's Events tab shows as
  the transport's last error): its time and message, in the device's broker report, which
  expires `ttl` seconds after its last write.

  Input:
    KEYS[1] report: the device's report for the transport (`…:broker:<transport>:report`)

    ARGV[1] when (ISO)
    ARGV[2] the error's message (scrubbed, cut)
    ARGV[3] TTL (seconds)

  Output:
    1
]]
redis.call('HSET', KEYS[1], 'lastErrorAt', ARGV[1], 'lastError', ARGV[2])
redis.call('HINCRBY', KEYS[1], 'failures', 1)
redis.call('EXPIRE', KEYS[1], ARGV[3])
return 1
