--[[
  Takes messages out of a chat's unread set (they were read) and, when they are forgotten (their
  records expired), out of the chat's messages too; keeps the chat's `unread` field, the count
  GET /chats shows, equal to the set's size (as mgw_chat does when it adds one). The chat's hash
  is only written while it exists: a count never re-creates a chat that expired (without a TTL).

  Input:
    KEYS[1] the chat's unread inbound ids (keys.chat(deviceId, chatId) .. ':unread')
    KEYS[2] the chat (keys.chat(deviceId, chatId))
    KEYS[3] the chat's message ids (keys.chat(deviceId, chatId) .. ':msgs')
    ARGV[1] '1' to take them out of the chat's messages as well (forgotten), '0' not (read)
    ARGV[2] and after: the message ids

  Output:
    { how many of them were unread, how many unread remain }
]]
local ids = {}
for i = 2, #ARGV do ids[#ids + 1] = ARGV[i] end
if ARGV[1] == '1' then redis.call('ZREM', KEYS[3], unpack(ids)) end
local taken = redis.call('ZREM', KEYS[1], unpack(ids))
local left = redis.call('ZCARD', KEYS[1])
if redis.call('EXISTS', KEYS[2]) == 1 then redis.call('HSET', KEYS[2], 'unread', left) end
return { taken, left }
