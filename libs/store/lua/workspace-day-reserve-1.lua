--[[
  Reserves messages in a workspace's daily quota: the check and the count in one step, so requests
  accepted at once on several API replicas never take the workspace past its `messagesPerDay`.
  A request is reserved whole or not at all (a list over the quota is refused whole); what the
  accept call then refuses is given back (DECRBY by the caller).

  Input:
    KEYS[1] the day's count (keys.workspaceDayCount)

    ARGV[1] the messages to reserve
    ARGV[2] the quota (the most messages the day may count)
    ARGV[3] the count's TTL (seconds)

  Output:
    { 1, count after } reserved; { 0, count } refused (nothing counted)
]]
local n, quota = tonumber(ARGV[1]), tonumber(ARGV[2])
local count = tonumber(redis.call('GET', KEYS[1]) or '0')
if count + n > quota then return { 0, count } end
count = redis.call('INCRBY', KEYS[1], n)
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[3]))
return { 1, count }
