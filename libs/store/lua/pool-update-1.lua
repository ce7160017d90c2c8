--[[
  Changes fields of an existing pool's definition and answers the whole of it: a pool deleted
  meanwhile is not brought back as a hash holding only the changed fields.

  Input:
    KEYS[1] def: the pool's hash (keys.pool)

    ARGV[1..] (field, value) pairs to set (updatedAt among them)

  Output:
    the definition after the change as HGETALL answers it, or an empty array when there is no pool
]]
if redis.call('EXISTS', KEYS[1]) == 0 then return {} end
redis.call('HSET', KEYS[1], unpack(ARGV))
return redis.call('HGETALL', KEYS[1])
