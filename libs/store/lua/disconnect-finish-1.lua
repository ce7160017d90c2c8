--[[
  Publishes a disconnect's outcome for the callers that joined it, only while the device's marker
  is still this disconnect's.

  Input:
    KEYS[1] marker: the device's disconnect marker (keys.disconnecting)

    ARGV[1] id of this disconnect's marker
    ARGV[2] the ended marker with its reply (JSON)
    ARGV[3] TTL (ms) of the ended marker

  Output:
    1 when written, 0 when the marker is another disconnect's (or gone)
]]
local raw = redis.call('GET', KEYS[1])
if raw and cjson.decode(raw).id == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', tonumber(ARGV[3]))
  return 1
end
return 0
