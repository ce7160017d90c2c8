--[[
  Appends ids to the device's message index in order, each with the next number of the device's
  sequence (a batch accepted in one millisecond still has a total order, so a cursor is one number).
  The index keeps the newest 200000 ids (MESSAGE_INDEX_MAX of message-index.ts); records expire on
  their own.

  Defines:
    mgw_index(indexKey, seqKey, retentionSeconds, ids) -> nothing
]]
local function mgw_index(index, seq, retention, ids)
  local n = #ids
  if n == 0 then return end
  local base = redis.call('INCRBY', seq, n) - n
  local args = {}
  for i, id in ipairs(ids) do
    args[#args + 1] = base + i
    args[#args + 1] = id
  end
  for i = 1, #args, 1000 do
    redis.call('ZADD', index, unpack(args, i, math.min(i + 999, #args)))
  end
  redis.call('ZREMRANGEBYRANK', index, 0, -200001)
  redis.call('EXPIRE', index, retention)
  redis.call('EXPIRE', seq, retention)
end
