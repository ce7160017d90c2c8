--[[
  Records when a token last authenticated: its record's `lastUsedAt`, unless the record is gone
  (revoked: no record of that one field is left behind) or already holds a later time (another
  process wrote it). ISO times of one format compare as strings.

  Input:
    KEYS[1] the token's record (keys.tokenByHash or keys.adminTokenByHash of its hash)

    ARGV[1] now, as an ISO time

  Output:
    1 when written, 0 otherwise
]]
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local last = redis.call('HGET', KEYS[1], 'lastUsedAt')
if last and last >= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'lastUsedAt', ARGV[1])
return 1
