--[[
  Appends one event to a device's event log, and to its outbox when the device's webhook wants it,
  inside the script that makes the change it reports (so a change and its event are written
  together or not at all). The log (read by GET /events) takes every event, webhook or not: it is
  capped at 100000 entries (approximate trim: EVENT_LOG_MAX_EVENTS of @mgw/contracts), and its
  retention window is trimmed apart (libs/store/src/events/event-log.ts). The outbox is capped
  (approximate trim at 100000 entries: OUTBOX_MAX_EVENTS of @mgw/contracts) so a device whose
  notifier is away cannot fill Redis. Both entries have the same fields (id, type, ts, data,
  sealed): sealed data stays sealed in both (its seal is bound to the event id, not the stream).
  Every event also publishes the device id on the log's channel (`channel .. ':log'`,
  keys.eventLogChannel of @mgw/contracts): the API's event streams (GET /events/stream) hear that
  the log grew and read it; one PUBLISH, cheap when nobody listens.

  Defines:
    mgw_emit(hookKey, outboxKey, logKey, channel, deviceId, id, type, timestamp, dataJson, sealed?, tp?)
      -> 1 when written to the outbox, 0 when the webhook does not want it (none, disabled, or not
      subscribed to `type`); the log entry is written either way. `sealed`: the data was sealed
      with eventSealContext (it holds message text). Every caller passes the log key among its
      KEYS (same device hash tag as the outbox, so the script stays in one slot). `tp`: the W3C
      traceparent of the message the event is about (its record's, with tracing on), kept in both
      entries so that whatever carries the event out continues that trace.
]]
local function mgw_emit(hook, outbox, log, channel, deviceId, id, etype, ts, data, sealed, tp)
  local seal = '0'
  if sealed then seal = '1' end
  local fields = { 'id', id, 'type', etype, 'ts', ts, 'data', data, 'sealed', seal }
  if tp and tp ~= '' then
    fields[11] = 'tp'
    fields[12] = tp
  end
  redis.call('XADD', log, 'MAXLEN', '~', 100000, '*', unpack(fields))
  redis.call('PUBLISH', channel .. ':log', deviceId)
  local h = redis.call('HMGET', hook, 'url', 'events', 'disabledAt')
  if not h[1] or h[3] then return 0 end
  if h[2] and h[2] ~= '*' and not string.find(',' .. h[2] .. ',', ',' .. etype .. ',', 1, true) then return 0 end
  redis.call('XADD', outbox, 'MAXLEN', '~', 100000, '*', unpack(fields))
  redis.call('PUBLISH', channel, deviceId)
  return 1
end
