--[[
  Remembers that a request's attachment failed, so its other messages fail without a fetch. Only
  while the content exists: HSET on a deleted content would recreate it without a TTL.

  Input:
    KEYS[1] content (keys.content)

    ARGV[1] the reason

  Output:
    nothing (nil)
]]
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('HSET', KEYS[1], 'attachmentError', ARGV[1]) end
