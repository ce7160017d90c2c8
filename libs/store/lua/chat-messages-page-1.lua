--[[
  Reads one page of a chat's messages (GET /chats/:chatId/messages) in one round trip: the chat's
  message ids before the cursor, newest first; each one's record; and, for a message the account
  sent from a request's content, the content fields what it said is read from. The keys are built
  from the prefixes (keys.message(deviceId, ''), keys.content(deviceId, '')): they carry the
  device's hash tag, so they are in KEYS[1]'s slot. Reads only.

  Input:
    KEYS[1] the chat's message ids (keys.chat(deviceId, chatId) .. ':msgs'), scored by place
    ARGV[1] message record key prefix
    ARGV[2] content key prefix
    ARGV[3] the highest place to read: '+inf', or '(' .. the cursor (exclusive)
    ARGV[4] limit (1..100)
    ARGV[5] the content's field that says it keeps what it showed (SHOWN_FIELDS.flag of content-store.ts)
    ARGV[6] the content's sealed body field (SHOWN_FIELDS.body)
    ARGV[7] the prefix of a message's own variables in the content (SHOWN_FIELDS.varsPrefix)

  Output:
    { more (0|1), { messageId, place, { record field, value, ... }, { flag, body, vars } | {} }, ... }
    A message whose record expired is answered with an empty field list (the caller forgets it).
]]
local limit = tonumber(ARGV[4])
local flat = redis.call('ZREVRANGEBYSCORE', KEYS[1], ARGV[3], '-inf', 'WITHSCORES', 'LIMIT', 0, limit + 1)
local out = { #flat > limit * 2 and 1 or 0 }
for i = 1, math.min(#flat, limit * 2), 2 do
  local id = flat[i]
  local fields = redis.call('HGETALL', ARGV[1] .. id)
  local h = {}
  for j = 1, #fields, 2 do h[fields[j]] = fields[j + 1] end
  local content = {}
  -- What MessageStore.contentIdOf reads: an outbound message's content, not an OTP's.
  if h.direction ~= 'inbound' and (h.contentId or '') ~= '' and h.kind ~= 'otp' then
    content = redis.call('HMGET', ARGV[2] .. h.contentId, ARGV[5], ARGV[6], ARGV[7] .. id)
  end
  out[#out + 1] = { id, flat[i + 1], fields, content }
end
return out
