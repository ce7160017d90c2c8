--[[
  Reserves room for one media object in its device's media quota: drops the entries that have
  expired (at most 200 a call), then adds the object unless the device would go over its bytes or
  objects. Both keys expire a retention after the last reserve, when every entry has expired too.

  Input:
    KEYS[1] the device's media expiries (keys.mediaExpiries): mediaId -> expiry (ms)
    KEYS[2] the device's media sizes (keys.mediaSizes): mediaId -> bytes, `_total`

    ARGV[1] mediaId
    ARGV[2] its size (bytes)
    ARGV[3] its expiry (epoch ms)
    ARGV[4] now (epoch ms)
    ARGV[5] the device's byte limit
    ARGV[6] the device's object limit
    ARGV[7] the keys' TTL (seconds)

  Output:
    { 1, bytes stored now } when reserved; { 0, bytes stored, objects stored } when refused
]]
local expired = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[4], 'LIMIT', 0, 200)
for _, id in ipairs(expired) do
  local size = tonumber(redis.call('HGET', KEYS[2], id) or '0')
  redis.call('HINCRBY', KEYS[2], '_total', -size)
  redis.call('HDEL', KEYS[2], id)
  redis.call('ZREM', KEYS[1], id)
end
local total = tonumber(redis.call('HGET', KEYS[2], '_total') or '0')
local count = redis.call('ZCARD', KEYS[1])
local size = tonumber(ARGV[2])
if total + size > tonumber(ARGV[5]) or count + 1 > tonumber(ARGV[6]) then
  return { 0, total, count }
end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], size)
total = redis.call('HINCRBY', KEYS[2], '_total', size)
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[7]))
redis.call('EXPIRE', KEYS[2], tonumber(ARGV[7]))
return { 1, total }
