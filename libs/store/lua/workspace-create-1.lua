--[[
  Writes a new workspace's record unless one of that id exists: the check and the write in one
  step, so two operators creating the same id at once get one workspace and one refusal.

  Input:
    KEYS[1] def: the workspace's hash (keys.workspace)

    ARGV[1..] (field, value) pairs of the record

  Output:
    1 when written, 0 when a workspace of that id exists (nothing changed)
]]
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
