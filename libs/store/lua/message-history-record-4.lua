--[[
  Records one message of the account's history (history sync), once: a message the gateway
  recorded already (live, or from an earlier chunk) is not recorded again. It goes into its chat
  (chat-record.lua's mgw_chat_history: placed by its time, never unread), not into the device's
  message index (GET /messages lists what happened since the link), and emits no event. At most
  `max` history messages per device within the count's TTL.

  Input:
    KEYS[1] platform-id mapping: keys.inboundByPlatformId (a contact's), keys.messageByPlatformId (the account's)
    KEYS[2] record (keys.message)
    KEYS[3] chat index (keys.chatIndex)
    KEYS[4] history count (keys.historyCount)

    ARGV[1] messageId
    ARGV[2] retention seconds
    ARGV[3] the record's fields JSON
    ARGV[4] chat key prefix (keys.chat(deviceId, ''))
    ARGV[5] chat id (the contact's phone or LID, or the group's id)
    ARGV[6] chat type (direct, group)
    ARGV[7] its time (ms)
    ARGV[8] its time (ISO 8601)
    ARGV[9] direction (inbound, outbound)
    ARGV[10] a group's subject, sealed (or '')
    ARGV[11] the start of its text, sealed (or '')
    ARGV[12] max history messages (the count's bound)
    ARGV[13] the count's TTL (seconds)

  Output:
    1 when recorded, 0 when already recorded, -1 when the bound is reached (nothing written)
]]
--- @include "chat-record"
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
if tonumber(redis.call('GET', KEYS[4]) or '0') >= tonumber(ARGV[12]) then return -1 end
local retention = tonumber(ARGV[2])
redis.call('SET', KEYS[1], ARGV[1], 'EX', retention)
for k, v in pairs(cjson.decode(ARGV[3])) do redis.call('HSET', KEYS[2], k, v) end
redis.call('EXPIRE', KEYS[2], retention)
mgw_chat_history(KEYS[3], ARGV[4], ARGV[5], ARGV[1], tonumber(ARGV[7]), ARGV[8], ARGV[9], retention, ARGV[6],
  ARGV[10], ARGV[11])
redis.call('INCR', KEYS[4])
redis.call('EXPIRE', KEYS[4], tonumber(ARGV[13]))
return 1
