--[[
  Puts a contact on a device's suppression list or takes it off, one contact one entry, and emits
  `contact.opted_out` / `contact.opted_in` in the same step when the list changed (`mgw_emit`
  from includes/event-emit.lua): a change and its event are written
  together. `out` adds the address unless the contact is on the list already by either identity;
  `in` removes every identity of the contact.

  Input:
    KEYS[1] list: the device's suppression list, address -> ms (keys.optOuts)
    KEYS[2] webhook: the device's webhook hash (keys.webhook)
    KEYS[3] outbox: the device's event stream (keys.eventOutbox)
    KEYS[4] map: the device's phone <-> LID hash (keys.contactIdentities)
    KEYS[5] event log (keys.eventLog): every event, wanted by the webhook or not

    ARGV[1] direction: 'out' | 'in'
    ARGV[2] address: a phone or `<digits>@lid`
    ARGV[3] now (ms), the entry's score
    ARGV[4] events channel (keys.eventsChannel)
    ARGV[5] deviceId
    ARGV[6] event id
    ARGV[7] time (ISO)
    ARGV[8] event data: JSON

  Output:
    1 when the list changed, 0 when the contact was already on (off) it
]]
--- @include "event-emit"
--- @include "contact-identities"
local changed = 0
local ids = mgw_identities(KEYS[4], ARGV[2])
if ARGV[1] == 'out' then
  for _, id in ipairs(ids) do
    if redis.call('ZSCORE', KEYS[1], id) then return 0 end
  end
  changed = redis.call('ZADD', KEYS[1], 'NX', ARGV[3], ARGV[2])
else
  changed = redis.call('ZREM', KEYS[1], unpack(ids))
end
if changed == 0 then return 0 end
mgw_emit(KEYS[2], KEYS[3], KEYS[5], ARGV[4], ARGV[5], ARGV[6], 'contact.opted_' .. ARGV[1], ARGV[7], ARGV[8])
return 1
