--[[
  Records one message in its chat of the device's chat index (GET /chats, GET /chats/:chatId/messages):
  the chat's message ids in the chat's own order (its `seq`), an inbound one also among its unread
  (and the chat's `unread` field, their count), the chat's last message and activity, and the
  chat's place in the index. Everything is bounded and expires with the messages: at most 5000
  chats (CHAT_LIMITS.chats: the least recently active go, with their three keys), 2000 ids per
  chat (messagesPerChat), 1000 unread (unreadPerChat);
  each key's TTL is the message retention, renewed by each message. The chat keys are built from
  `prefix` (keys.chat(deviceId, '')): they carry the device's hash tag, so they are in this slot.

  Defines:
    mgw_chat(indexKey, prefix, chatId, messageId, atMs, atIso, direction, retention, chatType, subject,
      preview, contentId) -> nothing (`subject`: a group's sealed subject, or ''; `preview`: the
      sealed start of an inbound text, or ''; `contentId`: an outbound message's content, or ''),
      kept on the chat as its last message's, so GET /chats reads no message record
    mgw_chat_history(indexKey, prefix, chatId, messageId, atMs, atIso, direction, retention, chatType,
      subject, preview) -> nothing: a message of the account's history (never unread; placed by time
      below the messages recorded live)
]]
-- The chat's last message (unless `atMs` is older), its type and subject, its TTL, its place in
-- the index, and the index's bound: what mgw_chat and mgw_chat_history share. `live`: recorded as
-- it happened (not from history).
local function mgw_chat_place(index, prefix, chatId, chat, messageId, atMs, atIso, direction, retention,
    chatType, subject, preview, contentId, live)
  -- A message recorded late (an older one) is in the chat, but not its last message. WhatsApp
  -- stamps a contact's message in whole seconds, ours are in ms: within the same second, a live
  -- message recorded after the last one is the later (a reply a second after our message).
  local last = tonumber(redis.call('HGET', chat, 'lastAtMs') or '0')
  if atMs >= last or (live and math.floor(atMs / 1000) == math.floor(last / 1000)) then
    redis.call('HSET', chat, 'lastMessageId', messageId, 'lastDirection', direction, 'lastAt', atIso,
      'lastAtMs', atMs, 'lastPreview', preview, 'lastContentId', contentId)
  end
  redis.call('HSET', chat, 'type', chatType)
  if subject ~= '' then redis.call('HSET', chat, 'subject', subject) end
  redis.call('EXPIRE', chat, retention)
  redis.call('ZADD', index, 'GT', atMs, chatId)
  local over = redis.call('ZCARD', index) - 5000
  if over > 0 then
    local gone = redis.call('ZPOPMIN', index, over)
    for i = 1, #gone, 2 do
      local k = prefix .. gone[i]
      redis.call('DEL', k, k .. ':msgs', k .. ':unread')
    end
  end
  redis.call('EXPIRE', index, retention)
end

local function mgw_chat(index, prefix, chatId, messageId, atMs, atIso, direction, retention, chatType, subject,
    preview, contentId)
  local chat = prefix .. chatId
  local msgs, unread = chat .. ':msgs', chat .. ':unread'
  local seq = redis.call('HINCRBY', chat, 'seq', 1)
  redis.call('ZADD', msgs, seq, messageId)
  redis.call('ZREMRANGEBYRANK', msgs, 0, -2001)
  redis.call('EXPIRE', msgs, retention)
  if direction == 'inbound' then
    redis.call('ZADD', unread, seq, messageId)
    redis.call('ZREMRANGEBYRANK', unread, 0, -1001)
    redis.call('EXPIRE', unread, retention)
    -- The count GET /chats shows, kept beside the set (chat-take-3.lua keeps it when ids leave).
    redis.call('HSET', chat, 'unread', redis.call('ZCARD', unread))
  end
  mgw_chat_place(index, prefix, chatId, chat, messageId, atMs, atIso, direction, retention, chatType, subject,
    preview, contentId, true)
end

-- A message of the account's history (history sync): placed by its time below every message the
-- gateway recorded live (whose places are 1, 2, ...: a history message's is atMs / 1e13, under 1),
-- so a chat's pages stay in time order; never unread (it was the phone's to read).
local function mgw_chat_history(index, prefix, chatId, messageId, atMs, atIso, direction, retention, chatType,
    subject, preview)
  local chat = prefix .. chatId
  local msgs = chat .. ':msgs'
  redis.call('ZADD', msgs, atMs / 1e13, messageId)
  redis.call('ZREMRANGEBYRANK', msgs, 0, -2001)
  redis.call('EXPIRE', msgs, retention)
  mgw_chat_place(index, prefix, chatId, chat, messageId, atMs, atIso, direction, retention, chatType, subject,
    preview, '', false)
end
