--[[
  Reads a page of the device's message index (GET /messages) in one round trip: up to `count` ids
  before the cursor, newest first, each with its record, and whether more ids follow. The record
  keys are built from the prefix (keys.message(deviceId, '')): they carry the device's hash tag,
  so they are in KEYS[1]'s slot. Reads only.

  Each record is answered as one JSON object (cjson) of its fields: a dozen fields as one string
  rather than two dozen cost the API less to read (ioredis makes a string of each element;
  JSON.parse makes the record in one native pass), and one script less than a command per record.

  Input:
    KEYS[1] the device's message index (keys.messageIndex): id -> place
    ARGV[1] message record key prefix
    ARGV[2] the highest place to read: '+inf', or '(' .. the cursor (exclusive)
    ARGV[3] count (1..)

  Output:
    { more (0|1), then per id: messageId, place, its record as one JSON object of its fields ('' when
      it has none: a message still queued, or one whose record expired) }
]]
local count = tonumber(ARGV[3])
local flat = redis.call('ZREVRANGEBYSCORE', KEYS[1], ARGV[2], '-inf', 'WITHSCORES', 'LIMIT', 0, count + 1)
local out = { #flat > count * 2 and 1 or 0 }
local n = #out
for i = 1, math.min(#flat, count * 2), 2 do
  local id = flat[i]
  local fields = redis.call('HGETALL', ARGV[1] .. id)
  local record = ''
  if #fields > 0 then
    local r = {}
    for j = 1, #fields, 2 do r[fields[j]] = fields[j + 1] end
    record = cjson.encode(r)
  end
  out[n + 1], out[n + 2], out[n + 3] = id, flat[i + 1], record
  n = n + 3
end
return out
