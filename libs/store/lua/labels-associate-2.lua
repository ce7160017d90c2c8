--[[
  Puts a label on a chat or takes it off (`labels.association` from app-state sync). A label may
  be named by a chat before its own edit arrives (the order inside a sync is WhatsApp's), so the id
  is kept either way, within the bounds.

  Input:
    KEYS[1] labels: the device's labels hash (keys.labels); the label's chats are KEYS[1] .. ':<id>:chats'
    KEYS[2] ids: every label id the device keeps anything of -> how many chats carry it (keys.labelIds)

    ARGV[1] id: the label id
    ARGV[2] chat: the chat id (phone digits, `<digits>@lid`, `<id>@g.us`)
    ARGV[3] action: 'add' or 'remove'
    ARGV[4] maxLabels: labels per device (LABEL_LIMITS.labels)
    ARGV[5] maxChats: chats per label (LABEL_LIMITS.chatsPerLabel)

  Output:
    1 kept, 0 refused (a new label past maxLabels), -1 refused (a new chat past maxChats)
]]
local labels, ids, id, chat = KEYS[1], KEYS[2], ARGV[1], ARGV[2]
local chats = labels .. ':' .. id .. ':chats'
if ARGV[3] == 'remove' then
  if redis.call('ZREM', chats, chat) == 1 then redis.call('HSET', ids, id, redis.call('ZCARD', chats)) end
  return 1
end
if redis.call('HEXISTS', ids, id) == 0 and redis.call('HLEN', ids) >= tonumber(ARGV[4]) then return 0 end
if redis.call('ZSCORE', chats, chat) == false and redis.call('ZCARD', chats) >= tonumber(ARGV[5]) then
  return -1
end
redis.call('ZADD', chats, 0, chat)
redis.call('HSET', ids, id, redis.call('ZCARD', chats))
return 1
