--[[
  Replaces an Idempotency-Key's record only while it still holds what its writer last saw: a
  retry taking over a key whose run is gone (or whose outcome was unknown), or a run marking its
  outcome unknown, must not overwrite what another request wrote meanwhile. An empty new value
  frees the key.

  Input:
    KEYS[1] the key's record (keys.idempotency)

    ARGV[1] the sealed value expected there
    ARGV[2] the sealed value to put ('' frees the key)
    ARGV[3] its TTL (s)

  Output:
    1 when replaced (or freed), 0 when the record holds something else (or is gone)
]]
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[2] == '' then
  redis.call('DEL', KEYS[1])
else
  redis.call('SET', KEYS[1], ARGV[2], 'EX', tonumber(ARGV[3]))
end
return 1
