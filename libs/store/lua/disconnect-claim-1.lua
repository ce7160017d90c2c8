--[[
  Claims a device's disconnect marker for this /disconnect unless another one runs: a running
  marker of another disconnect is answered instead (its caller waits for that one's outcome),
  except the one named as taken over (its process died).

  Input:
    KEYS[1] marker: the device's disconnect marker, JSON with `id` and `state` (keys.disconnecting)

    ARGV[1] this disconnect's marker (JSON)
    ARGV[2] TTL (ms) of the marker while it runs
    ARGV[3] id of a dead disconnect's marker to take over ('' for none)

  Output:
    false when claimed; the other disconnect's marker (JSON) when one runs
]]
local raw = redis.call('GET', KEYS[1])
if raw then
  local m = cjson.decode(raw)
  if m.state == 'running' and m.id ~= ARGV[3] then return raw end
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', tonumber(ARGV[2]))
return false
