--[[
  Writes a new console user's record unless the login name is taken: the check and the write in
  one step, so two admins creating the same name at once (in one workspace or in two) get one user
  and one refusal, and no reader ever sees a half-written record.

  Input:
    KEYS[1] def: the user's hash (keys.consoleUser)

    ARGV[1..] (field, value) pairs of the record

  Output:
    1 when written, 0 when the name is taken (nothing changed)
]]
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
