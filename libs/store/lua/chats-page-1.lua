--[[
  Reads one page of the device's chats (GET /chats) in one round trip: the chats of the index,
  most recently active first, after the cursor; each chat's fields the list shows and its unread
  count; and, for a chat whose last message the account sent, the fields of that message's content
  its text is read from (`lastPreview` is kept on the chat only for what a contact wrote). The keys
  are built from the prefixes (keys.chat(deviceId, ''), keys.content(deviceId, '')): they carry the
  device's hash tag, so they are in KEYS[1]'s slot. Reads only.

  The answer is one flat list (a nested one costs Redis and the client a conversion per level):
  named fields are read with HMGET, in the order the caller gives them, rather than the whole hash.

  Input:
    KEYS[1] index: the device's chat index (keys.chatIndex): chatId -> last activity (ms)
    ARGV[1] chat key prefix
    ARGV[2] content key prefix
    ARGV[3] the highest score to read: '+inf', or the cursor's score
    ARGV[4] the cursor's chat id ('' for none): at the cursor's score, the chats up to and including
            it (Redis orders equal scores by id, descending here) were on earlier pages
    ARGV[5] limit (1..100)
    ARGV[6] the content's field that says it keeps what it showed (SHOWN_FIELDS.flag of content-store.ts)
    ARGV[7] the content's sealed body field (SHOWN_FIELDS.body)
    ARGV[8] the prefix of a message's own variables in the content (SHOWN_FIELDS.varsPrefix)
    ARGV[9] the chat's field holding its last message's sealed preview (an inbound one's)
    ARGV[10] the chat's field holding its last message's id
    ARGV[11] the chat's field holding the content its last message was sent from (an outbound one's)
    ARGV[12] the chat's field holding its unread count (kept with its `:unread` set; a chat recorded
             before the field existed has none: its set is counted)
    ARGV[13] and after: the chat's other fields to answer (type, subject, ...)

  Output:
    { more (0|1), then per chat: chatId, score, unreadCount, the fields ARGV[9..] in that order
      (nil where missing; the unread count's is answered as unreadCount, not again), the
      content's three fields of ARGV[6..8] (nil unless read) }
    A chat whose hash has expired is answered with its fields nil (the caller skips it).
]]
local index, chatPrefix, contentPrefix = KEYS[1], ARGV[1], ARGV[2]
local max, cursorId, limit = ARGV[3], ARGV[4], tonumber(ARGV[5])
local fieldNames = {}
for i = 9, #ARGV do fieldNames[#fieldNames + 1] = ARGV[i] end
local picked = {}
local offset, batch = 0, limit + 1
while true do
  local flat = redis.call('ZREVRANGEBYSCORE', index, max, '-inf', 'WITHSCORES', 'LIMIT', offset, batch)
  offset = offset + #flat / 2
  for i = 1, #flat, 2 do
    if #picked > limit then break end
    local id, score = flat[i], flat[i + 1]
    if not (cursorId ~= '' and tonumber(score) == tonumber(max) and id >= cursorId) then
      picked[#picked + 1] = { id, score }
    end
  end
  if #picked > limit or #flat < batch * 2 then break end
end

local out = { #picked > limit and 1 or 0 }
local n = #out
for i = 1, math.min(limit, #picked) do
  local id, score = picked[i][1], picked[i][2]
  local chat = chatPrefix .. id
  local fields = redis.call('HMGET', chat, unpack(fieldNames))
  local preview, lastMessageId, contentId = fields[1], fields[2], fields[3]
  local content = { false, false, false }
  if (preview or '') == '' and (contentId or '') ~= '' and lastMessageId then
    content = redis.call('HMGET', contentPrefix .. contentId, ARGV[6], ARGV[7], ARGV[8] .. lastMessageId)
  end
  out[n + 1], out[n + 2], out[n + 3] = id, score, tonumber(fields[4]) or redis.call('ZCARD', chat .. ':unread')
  n = n + 3
  for j = 1, #fields do
    if j ~= 4 then
      n = n + 1
      out[n] = fields[j]
    end
  end
  out[n + 1], out[n + 2], out[n + 3] = content[1], content[2], content[3]
  n = n + 3
end
return out
