--[[
  Keeps a chat's archive, pin and mute (app-state `chats.update`: made on the phone, on another
  linked device or by this one) on the chat's record, so the dashboard's chat list shows them with
  the rest of the chat. Only a chat the index holds is written: the state never creates a chat
  record (nor a key without a TTL); it goes with the chat (its TTL, the index's bound). The fields
  are no text (a flag, a time): kept as the record's `type` and `lastAt` are, in the clear.

  Input:
    KEYS[1] the chat (keys.chat(deviceId, chatId))
    ARGV[1] archived: '1', '0', or '' (unchanged)
    ARGV[2] pinned: '1', '0', or '' (unchanged)
    ARGV[3] muted until (ms since the epoch), '0' (not muted), or '' (unchanged)

  Output:
    1 kept, 0 not (no such chat)
]]
local chat = KEYS[1]
if redis.call('HEXISTS', chat, 'lastMessageId') == 0 then return 0 end
local names = { 'archived', 'pinned', 'mutedUntil' }
for i = 1, 3 do
  local value = ARGV[i]
  if value == '0' then
    redis.call('HDEL', chat, names[i])
  elseif value ~= '' then
    redis.call('HSET', chat, names[i], value)
  end
end
return 1
