--[[
  Gives back to a workspace's day count what a reservation did not use (the accept call refused
  it), if the count is still there: one removed with the quota (WorkspaceStore.update) must not
  come back as a negative count without a TTL, which the next reservation would take as the day's.

  Input:
    KEYS[1] the day's count (keys.workspaceDayCount)

    ARGV[1] the messages to give back

  Output:
    the count after; -1 when there was none (nothing written)
]]
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
return redis.call('DECRBY', KEYS[1], tonumber(ARGV[1]))
