--[[
  Writes a new pool's definition unless a pool of that id exists: the check and the write in one
  step, so two operators creating the same id at once get one pool and one refusal (an HSETNX of
  one field and then the rest would show a half-written pool to a reader in between).

  Input:
    KEYS[1] def: the pool's hash (keys.pool)

    ARGV[1..] (field, value) pairs of the definition

  Output:
    1 when written, 0 when a pool of that id exists (nothing changed)
]]
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
