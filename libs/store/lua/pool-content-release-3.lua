--[[
  Ends a pooled message's move on the device it left: once the device it moved to holds its own
  copy, the message leaves the content it was read from (its bytes leave the quota with the last).
  Once per message: a repeat (a move finished again after a crash) does nothing.

  Input:
    KEYS[1] record (keys.message) on the device it left
    KEYS[2] content (keys.content) there
    KEYS[3] that device's queue stats (keys.deviceQueue)

  Output:
    1 when released now, 0 when it was already (or the message never moved)
]]
--- @include "content-release"
local rec, content, stats = KEYS[1], KEYS[2], KEYS[3]
if redis.call('HEXISTS', rec, 'movedTo') == 0 then return 0 end
if redis.call('HSETNX', rec, 'contentReleased', '1') == 0 then return 0 end
mgw_content_release(content, stats, rec)
return 1
