--[[
  Appends one event to a device's outbox when the device's webhook wants it, inside the script that
  makes the change it reports (so a change and its event are written together or not at all). The
  outbox is capped (approximate trim at 100000 entries: OUTBOX_MAX_EVENTS of @mgw/contracts) so a
  device whose notifier is away cannot fill Redis.

  Defines:
    mgw_emit(hookKey, outboxKey, channel, deviceId, id, type, timestamp, dataJson, sealed?) -> 1 when
      written, 0 when the webhook does not want it (none, disabled, or not subscribed to `type`).
      `sealed`: the data was sealed with eventSealContext (it holds message text).
]]
local function mgw_emit(hook, outbox, channel, deviceId, id, etype, ts, data, sealed)
  local h = redis.call('HMGET', hook, 'url', 'events', 'disabledAt')
  if not h[1] or h[3] then return 0 end
  if h[2] and h[2] ~= '*' and not string.find(',' .. h[2] .. ',', ',' .. etype .. ',', 1, true) then return 0 end
  local seal = '0'
  if sealed then seal = '1' end
  redis.call('XADD', outbox, 'MAXLEN', '~', 100000, '*', 'id', id, 'type', etype, 'ts', ts, 'data', data, 'sealed', seal)
  redis.call('PUBLISH', channel, deviceId)
  return 1
end
