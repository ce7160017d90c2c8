--[[
  Takes back a batch refused after some of its pieces were committed: `removed` of its messages
  stop counting against the device's quota and the content; when none is left the content goes
  with its bytes. It only frees memory, so it is run with the flag `allow-oom` (content-store.ts
  puts the shebang in front): it runs on a Redis that is out of memory too.

  Input:
    KEYS[1] content (keys.content)
    KEYS[2] the device's queue stats (keys.deviceQueue)

    ARGV[1] removed: the messages taken back
    ARGV[2] '1' when none is left (the content goes), else '0'

  Output:
    removed
]]
local n = tonumber(ARGV[1])
local bytes = 0
if ARGV[2] == '1' then
  bytes = tonumber(redis.call('HGET', KEYS[1], 'bytes') or '0')
  redis.call('DEL', KEYS[1])
elseif n > 0 then
  redis.call('HINCRBY', KEYS[1], 'remaining', -n)
end
if n > 0 and redis.call('HINCRBY', KEYS[2], 'messages', -n) < 0 then redis.call('HSET', KEYS[2], 'messages', 0) end
if bytes > 0 and redis.call('HINCRBY', KEYS[2], 'bytes', -bytes) < 0 then redis.call('HSET', KEYS[2], 'bytes', 0) end
return n
