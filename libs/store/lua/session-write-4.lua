--[[
  Writes a device's session record and, when its status changed, the `session.status` event in the
  same step (`mgw_emit` from includes/event-emit.lua): two processes
  writing statuses one after the other produce their events in that order.

  Input:
    KEYS[1] session: the device's session hash (keys.session)
    KEYS[2] webhook: the device's webhook hash, which says whether the event is wanted (keys.webhook)
    KEYS[3] outbox: the device's event stream (keys.eventOutbox)
    KEYS[4] event log (keys.eventLog): every event, wanted by the webhook or not

    ARGV[1] status
    ARGV[2] fields to set: JSON object
    ARGV[3] fields to delete: JSON array
    ARGV[4] events channel (keys.eventsChannel)
    ARGV[5] deviceId
    ARGV[6] event id
    ARGV[7] now (ISO)
    ARGV[8] reason of a disconnect ('' for none)
    ARGV[9] '1': the event is written even when the status did not change (a passkey-gated link's
      next step); '' otherwise
    ARGV[10] more fields of the event's data: JSON object ('' for none)

  Output:
    0 when no event was written for an unchanged status, else what mgw_emit answers (1 when the
    event was written)
]]
--- @include "event-emit"
local old = redis.call('HGET', KEYS[1], 'status')
for _, f in ipairs(cjson.decode(ARGV[3])) do redis.call('HDEL', KEYS[1], f) end
for k, v in pairs(cjson.decode(ARGV[2])) do redis.call('HSET', KEYS[1], k, v) end
if old == ARGV[1] and ARGV[9] ~= '1' then return 0 end
local r = redis.call('HMGET', KEYS[1], 'phone', 'name')
local d = { deviceId = ARGV[5], status = ARGV[1] }
if ARGV[8] ~= '' then d.reason = ARGV[8] end
if r[1] then d.phone = r[1] end
if r[2] then d.name = r[2] end
if ARGV[10] ~= nil and ARGV[10] ~= '' then
  for k, v in pairs(cjson.decode(ARGV[10])) do d[k] = v end
end
return mgw_emit(KEYS[2], KEYS[3], KEYS[4], ARGV[4], ARGV[5], ARGV[6], 'session.status', ARGV[7], cjson.encode(d))
