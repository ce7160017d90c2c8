--[[
  Reserves messages in a workspace's daily quota: the check and the count in one step, so requests
  accepted at once on several API replicas never take the workspace past its `messagesPerDay`.
  A request is reserved whole or not at all (a list over the quota is refused whole); what the
  accept call then refuses is given back (workspace-day-give-back-1).

  The day's count exists only while the workspace has the quota; what its devices accepted that
  day is always counted (their day usage, by the accept call). So a count the day does not have
  yet starts from that: without ARGV[4] the script answers that it needs it, and the caller
  sums its devices' `accepted` of the day and calls again with the sum. Two callers seeding at
  once both add to the first one's seed (SET NX).

  Input:
    KEYS[1] the day's count (keys.workspaceDayCount)

    ARGV[1] the messages to reserve
    ARGV[2] the quota (the most messages the day may count)
    ARGV[3] the count's TTL (seconds)
    ARGV[4] (optional) what the workspace's devices accepted that day: the count's start

  Output:
    { 1, count after } reserved; { 0, count } refused (nothing counted); { -1, 0 } the day has no
    count yet and no ARGV[4] was given (nothing counted)
]]
local n, quota = tonumber(ARGV[1]), tonumber(ARGV[2])
local current = redis.call('GET', KEYS[1])
if not current then
  if not ARGV[4] then return { -1, 0 } end
  redis.call('SET', KEYS[1], ARGV[4], 'EX', tonumber(ARGV[3]))
  current = ARGV[4]
end
local count = tonumber(current)
if count + n > quota then return { 0, count } end
count = redis.call('INCRBY', KEYS[1], n)
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[3]))
return { 1, count }
