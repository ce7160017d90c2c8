--[[
  Adds a device to a workspace's set within its device quota: the count and the add in one step,
  so two creations at once never take a workspace past its quota.

  Input:
    KEYS[1] def: the workspace's hash (keys.workspace); its `quota:devices` field, when present,
            is the most devices it may own
    KEYS[2] devices: the set of the workspace's devices (keys.workspaceDevices)

    ARGV[1] the device id
    ARGV[2] (optional) the most devices it may own without a `quota:devices` (the install's
            ceiling, WORKSPACE_MAX_DEVICES); absent: no bound then

  Output:
    1 added; 0 it was there already (a retry); -1 the quota is reached (nothing added);
    -2 no such workspace
]]
if redis.call('EXISTS', KEYS[1]) == 0 then return -2 end
if redis.call('SISMEMBER', KEYS[2], ARGV[1]) == 1 then return 0 end
local quota = tonumber(redis.call('HGET', KEYS[1], 'quota:devices')) or tonumber(ARGV[2])
if quota and redis.call('SCARD', KEYS[2]) >= quota then return -1 end
redis.call('SADD', KEYS[2], ARGV[1])
return 1
