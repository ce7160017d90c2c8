--[[
  A receipt's transition, by the message's WhatsApp id: message-transition-7 with KEYS[1] the
  WhatsApp-id mapping instead of the record, whose key is built from the id the mapping names (in
  this device's slot), so a receipt needs one script call instead of a read and then the script.
  A receipt settles nothing, so the content key is not used.

  Input:
    KEYS[1] WhatsApp-id mapping (keys.messageByPlatformId)
    KEYS[2] unused (the transition's content key)
    KEYS[3] the device's queue stats (keys.deviceQueue)
    KEYS[4] webhook (keys.webhook)
    KEYS[5] event outbox (keys.eventOutbox)
    KEYS[6] the device's phone <-> LID map (keys.contactIdentities)
    KEYS[7] event log (keys.eventLog): every event, wanted by the webhook or not

    ARGV[1..18] as message-transition-7.lua's
    ARGV[19] record key prefix (keys.message(deviceId, ''))
    ARGV[20] '1': the caller traces messages (answer the record's traceparent)

  Output:
    -2 when the WhatsApp id is not ours (unknown, or its mapping expired), 0 when the record did
    not change, else { impliedDelivery, traceparent }: impliedDelivery '1' when a read receipt also
    made the message delivered (no delivery receipt had), else '0'; traceparent the record's when
    asked for (ARGV[20] '1') and kept, else ''
]]
--- @include "event-emit"
--- @include "contact"
--- @include "content-release"
--- @include "chat-record"
local mid = redis.call('GET', KEYS[1])
if not mid then return -2 end
local rec = ARGV[19] .. mid
local content, stats = rec, KEYS[3]
--- @include "message-transition"
