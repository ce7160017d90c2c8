--[[
  Reads one page of the device's chats (GET /chats) in one round trip: the chats of the index,
  most recently active first, after the cursor; each chat's hash and unread count; and, for a chat
  whose last message the account sent, the fields of that message's content its text is read from
  (`lastPreview` is kept on the chat only for what a contact wrote). The keys are built from the
  prefixes (keys.chat(deviceId, ''), keys.content(deviceId, '')): they carry the device's hash tag,
  so they are in KEYS[1]'s slot. Reads only.

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

  Output:
    { more (0|1), { chatId, score, unreadCount, { hash field, value, ... }, { shown, body, vars } | {} }, ... }
    A chat whose hash has expired is answered with an empty field list (the caller skips it).
]]
local index, chatPrefix, contentPrefix = KEYS[1], ARGV[1], ARGV[2]
local max, cursorId, limit = ARGV[3], ARGV[4], tonumber(ARGV[5])
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
for i = 1, math.min(limit, #picked) do
  local id, score = picked[i][1], picked[i][2]
  local chat = chatPrefix .. id
  local fields = redis.call('HGETALL', chat)
  local unread = redis.call('ZCARD', chat .. ':unread')
  local content = {}
  local h = {}
  for j = 1, #fields, 2 do h[fields[j]] = fields[j + 1] end
  if (h.lastPreview or '') == '' and (h.lastContentId or '') ~= '' and h.lastMessageId then
    content = redis.call('HMGET', contentPrefix .. h.lastContentId, ARGV[6], ARGV[7], ARGV[8] .. h.lastMessageId)
  end
  out[#out + 1] = { id, score, unread, fields, content }
end
return out
