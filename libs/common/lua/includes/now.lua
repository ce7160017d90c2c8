--[[
  Redis's own clock, in milliseconds: every process judges deadlines on one clock, whatever its
  host's says. Scripts that call TIME are replicated by effects (Redis 7's default), so a replica
  applies what the master decided.

  Defines:
    nowMs() -> number
]]
local function nowMs()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
