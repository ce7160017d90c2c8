--[[
  Publishes one event of a device for its webhook (appends it to the device's outbox when the
  webhook wants it): events that are not part of a change some other script makes.

  Input:
    KEYS[1] webhook (keys.webhook)
    KEYS[2] event outbox (keys.eventOutbox)
    KEYS[3] event log (keys.eventLog): every event, wanted by the webhook or not

    ARGV[1] events channel
    ARGV[2] deviceId
    ARGV[3] event id
    ARGV[4] event type
    ARGV[5] timestamp (ISO 8601)
    ARGV[6] event data JSON (sealed with eventSealContext when ARGV[7] is '1')
    ARGV[7] '1' when the data is sealed (it holds a contact's or the members' text), else absent

  Output:
    1 when written, 0 when the webhook does not want it
]]
--- @include "event-emit"
return mgw_emit(KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7] == '1')
