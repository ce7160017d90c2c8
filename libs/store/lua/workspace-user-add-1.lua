--[[
  Lists a console user's name in its workspace's set unless the workspace holds its limit of
  users already: the count and the add in one step, so users added at once never pass it.

  Input:
    KEYS[1] the workspace's user names (keys.workspaceUsers)

    ARGV[1] the login name
    ARGV[2] the most users the workspace may hold

  Output:
    1 listed; 0 it was listed already (nothing changed); -1 the limit is reached (nothing listed)
]]
if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 1 then return 0 end
if redis.call('SCARD', KEYS[1]) >= tonumber(ARGV[2]) then return -1 end
redis.call('SADD', KEYS[1], ARGV[1])
return 1
