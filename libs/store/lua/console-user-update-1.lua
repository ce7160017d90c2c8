--[[
  Changes fields of an existing console user's record (its password, role, stamp, updatedAt) and
  answers the whole of it: a user deleted meanwhile is not brought back as a hash holding only the
  changed fields (which could never sign in, but would keep its name taken).

  Input:
    KEYS[1] def: the user's hash (keys.consoleUser)

    ARGV[1..] (field, value) pairs to set

  Output:
    the record after the change as HGETALL answers it, or an empty array when there is no user
]]
if redis.call('EXISTS', KEYS[1]) == 0 then return {} end
redis.call('HSET', KEYS[1], unpack(ARGV))
return redis.call('HGETALL', KEYS[1])
