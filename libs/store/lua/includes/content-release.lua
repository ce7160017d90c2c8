--[[
  A message leaves its request's content: one fewer message left to send from it; with the last,
  its bytes leave the device's quota and the content goes (a text or an attachment, not an OTP's
  code, stays without its bytes for the records that show it). Used by a message's settlement
  (message-transition.lua) and by a pooled message's move to another device (pool-content-release-3.lua).

  Defines:
    mgw_content_release(contentKey, statsKey, recordKey) -> nothing
]]
local function mgw_content_release(content, stats, rec)
  if redis.call('EXISTS', content) == 0 then return end
  local left = redis.call('HINCRBY', content, 'remaining', -1)
  if left > 0 then return end
  local bytes = tonumber(redis.call('HGET', content, 'bytes') or '0')
  -- bytes > 0: Lua prints -0 as "-0", which HINCRBY refuses (a content of no text, e.g. an edit)
  if bytes > 0 and redis.call('HINCRBY', stats, 'bytes', -bytes) < 0 then redis.call('HSET', stats, 'bytes', 0) end
  if redis.call('HGET', content, 'shown') == '1' and redis.call('HGET', rec, 'kind') ~= 'otp' then
    redis.call('HDEL', content, 'media')
    redis.call('HSET', content, 'bytes', 0)
  else
    redis.call('DEL', content)
  end
end
