--[[
  Reads one page of a chat's messages (GET /chats/:chatId/messages) in one round trip: whether the
  device has the chat (in its index, with a last message: ChatIndex.get's test), the chat's
  message ids before the cursor, newest first; each one's record; and, for a message the account
  sent from a request's content, the content fields what it said is read from. The keys are built
  from the prefixes (keys.message(deviceId, ''), keys.content(deviceId, '')): they carry the
  device's hash tag, so they are in KEYS[1]'s slot. Reads only.

  The answer is one flat list (a nested one costs Redis and the client a conversion per level),
  and each record is one JSON object (cjson) of its fields: a record's dozen fields as one string
  rather than two dozen cost the API a third less to read (ioredis makes a string of each element;
  JSON.parse makes the record in one native pass) and Redis no more.

  Input:
    KEYS[1] the chat's message ids (keys.chat(deviceId, chatId) .. ':msgs'), scored by place
    KEYS[2] the device's chat index (keys.chatIndex)
    KEYS[3] the chat (keys.chat(deviceId, chatId))
    ARGV[1] message record key prefix
    ARGV[2] content key prefix
    ARGV[3] the highest place to read: '+inf', or '(' .. the cursor (exclusive)
    ARGV[4] limit (1..100)
    ARGV[5] the content's field that says it keeps what it showed (SHOWN_FIELDS.flag of content-store.ts)
    ARGV[6] the content's sealed body field (SHOWN_FIELDS.body)
    ARGV[7] the prefix of a message's own variables in the content (SHOWN_FIELDS.varsPrefix)
    ARGV[8] the chat's id (its member in the index)

  Output:
    { -1 } when the device has no such chat; else
    { more (0|1), then per message: messageId, place, its record as one JSON object of its fields
      ('' once the record expired: the caller forgets it), the content's three fields of
      ARGV[5..7] (nil unless read) }
]]
if not redis.call('ZSCORE', KEYS[2], ARGV[8]) or not redis.call('HGET', KEYS[3], 'lastMessageId') then
  return { -1 }
end
local limit = tonumber(ARGV[4])
local flat = redis.call('ZREVRANGEBYSCORE', KEYS[1], ARGV[3], '-inf', 'WITHSCORES', 'LIMIT', 0, limit + 1)
local out = { #flat > limit * 2 and 1 or 0 }
local n = #out
for i = 1, math.min(#flat, limit * 2), 2 do
  local id = flat[i]
  local fields = redis.call('HGETALL', ARGV[1] .. id)
  local record = {}
  for j = 1, #fields, 2 do record[fields[j]] = fields[j + 1] end
  local direction, contentId, kind = record.direction, record.contentId, record.kind
  out[n + 1], out[n + 2], out[n + 3] = id, flat[i + 1], #fields > 0 and cjson.encode(record) or ''
  n = n + 3
  local content = { false, false, false }
  -- What MessageStore.contentIdOf reads: an outbound message's content, not an OTP's.
  if direction ~= 'inbound' and (contentId or '') ~= '' and kind ~= 'otp' then
    content = redis.call('HMGET', ARGV[2] .. contentId, ARGV[5], ARGV[6], ARGV[7] .. id)
  end
  out[n + 1], out[n + 2], out[n + 3] = content[1], content[2], content[3]
  n = n + 3
end
return out
