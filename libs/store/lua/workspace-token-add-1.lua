--[[
  Lists a new token in its workspace's token index unless the workspace holds its limit already:
  the count and the add in one step, so tokens minted at once never pass it.

  Input:
    KEYS[1] the workspace's token index (keys.workspaceTokens): token id -> SHA-256

    ARGV[1] the token id
    ARGV[2] its SHA-256
    ARGV[3] the most tokens the workspace may hold

  Output:
    1 listed; 0 the limit is reached (nothing listed)
]]
if redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1
