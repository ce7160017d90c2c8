--[[
  Records a message a contact wrote to the linked account, once (WhatsApp redelivers after a
  reconnect), lists it in the device's message index and in its chat (chat-record.lua) and emits
  `message.received` with it (its data sealed), and counts it in the device's usage of its day.

  Input:
    KEYS[1] platform-id mapping (keys.inboundByPlatformId)
    KEYS[2] record (keys.message)
    KEYS[3] webhook (keys.webhook)
    KEYS[4] event outbox (keys.eventOutbox)
    KEYS[5] message index (keys.messageIndex)
    KEYS[6] its sequence (keys.messageSeq)
    KEYS[7] event log (keys.eventLog): every event, wanted by the webhook or not
    KEYS[8] chat index (keys.chatIndex)

    ARGV[1] messageId
    ARGV[2] retention seconds
    ARGV[3] the record's fields JSON
    ARGV[4] events channel
    ARGV[5] deviceId
    ARGV[6] event id
    ARGV[7] receivedAt (ISO 8601)
    ARGV[8] sealed event data
    ARGV[9] chat key prefix (keys.chat(deviceId, ''))
    ARGV[10] chat id (the contact's phone or LID, or the group's id)
    ARGV[11] chat type (direct, group)
    ARGV[12] receivedAt (ms)
    ARGV[13] a group's subject, sealed (or '')
    ARGV[14] the start of its text, sealed (or ''): the chat's preview of its last message
    ARGV[15] its W3C traceparent (or ''): the event carries it (tracing on)
    ARGV[16] its day's usage (keys.deviceDayUsage(deviceId, receivedAt), in this slot): `received` counted
    ARGV[17] the usage's TTL (seconds)

  Output:
    1 when recorded, 0 when already seen
]]
--- @include "event-emit"
--- @include "message-index"
--- @include "chat-record"
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'EX', tonumber(ARGV[2])) then return 0 end
for k, v in pairs(cjson.decode(ARGV[3])) do redis.call('HSET', KEYS[2], k, v) end
redis.call('EXPIRE', KEYS[2], tonumber(ARGV[2]))
mgw_index(KEYS[5], KEYS[6], tonumber(ARGV[2]), { ARGV[1] })
mgw_chat(KEYS[8], ARGV[9], ARGV[10], ARGV[1], tonumber(ARGV[12]), ARGV[7], 'inbound', tonumber(ARGV[2]),
  ARGV[11], ARGV[13], ARGV[14], '')
mgw_emit(KEYS[3], KEYS[4], KEYS[7], ARGV[4], ARGV[5], ARGV[6], 'message.received', ARGV[7], ARGV[8], true, ARGV[15])
redis.call('HINCRBY', ARGV[16], 'received', 1)
redis.call('EXPIRE', ARGV[16], tonumber(ARGV[17]))
return 1
