--[[
  Accepts a group of send requests of one device in one call, atomically: each request's
  rate-limit hit is counted, then it is admitted or refused on what Redis holds at that instant
  (a single recipient is not on the account's blocklist, the device takes messages, its link
  generation is the one the jobs carry, its queue quota has room), and an admitted request's
  writes run: its content and batch records (recorded by the stores, see the api's
  `RecordedWrites`) and its jobs, added by BullMQ's own job-adding scripts (their source, wrapped
  as functions `bull[plain](KEYS, ARGV)` by `jobScriptsLua` of the BullMQ door, put in front of
  this script by message-accept.ts). Then the quota counts and the message index take the
  admitted messages. Nothing runs between the checks and the writes, on any replica.

  Input:
    KEYS[1] session hash (keys.session)
    KEYS[2] device quota hash (keys.deviceQueue)
    KEYS[3] message index (keys.messageIndex)
    KEYS[4] message sequence (keys.messageSeq)
    KEYS[5] the account's blocklist (keys.blocklist)
    KEYS[6] the device's phone <-> LID map (keys.contactIdentities)
    KEYS[7..] rate-limit counters

    ARGV[1] the call, packed with MessagePack (one argument: cheaper to send than hundreds),
      a list of three:
      1. the head: the link generation the jobs carry, quota messages, quota bytes, rate-limit
         window (ms), rate limit, index retention (s);
      2. the job keys: one pair per BullMQ script the jobs use, its name and its keys;
      3. the requests, each: counter (index in KEYS, 0: no hit to count), the messages and bytes
         it adds to the quota counts, the messages and bytes its quota check is for (-1: none),
         its op items, the address (a phone or `<digits>@lid`) of its one recipient to find
         on the blocklist by either identity ('': none), and the id of its first message when the
         request is idempotent ('': none): found in the message index, the request was accepted
         before (a retry after a reply that never came) and is not written again. An op: name, item count, items: `JOB`
         (script name, message id, BullMQ's three arguments) or a Redis command and its arguments.

  Output:
    [accepts (1/0), link generation, queued messages, queued bytes] after the writes, then per
    request: verdict (0 admitted, 1 over its rate limit, 2 no device, 3 quota full, 4 another link
    generation, 5 its recipient on the blocklist, 6 accepted before: nothing counted or written), the hit's count and ms left in its window (-1,
    -1: not counted), the queued messages and bytes it was judged against.
]]
--- @include "message-index"
--- @include "contact-identities"
local rcall = redis.call
local session, quota, indexKey, seqKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local blocklist, identities = KEYS[5], KEYS[6]
local call = cmsgpack.unpack(ARGV[1])
local head = call[1]
local expected, maxMessages, maxBytes = head[1], head[2], head[3]
local windowMs, limit, retention = head[4], head[5], head[6]
local jobKeys = {}
for _, set in ipairs(call[2]) do jobKeys[set[1]] = set[2] end

local s = rcall('HMGET', session, 'status', 'linkGeneration', 'linked')
local q = rcall('HMGET', quota, 'messages', 'bytes')
local accepts = s[1] == 'connected' or (s[1] == 'connecting' and s[3] == '1')
local generation = tonumber(s[2] or '0') or 0
local queued = math.max(0, tonumber(q[1] or '0') or 0)
local queuedBytes = math.max(0, tonumber(q[2] or '0') or 0)

-- An address is blocked by either identity the device's map knows for its contact (as
-- blocklist-check-2.lua answers it for the API's other checks).
local function isBlocked(address)
  for _, id in ipairs(mgw_identities(identities, address)) do
    if rcall('SISMEMBER', blocklist, id) == 1 then return true end
  end
  return false
end

local out = { 0, 0, 0, 0 }
local ids = {}
local addedMessages, addedBytes = 0, 0
for _, request in ipairs(call[3]) do
  local counter, messages, bytes = request[1], request[2], request[3]
  local checkMessages, checkBytes, items, address = request[4], request[5], request[6], request[7]
  local seen = request[8] ~= nil and request[8] ~= '' and rcall('ZSCORE', indexKey, request[8])
  local total, ttl = -1, -1
  if seen then
    -- accepted before: judged on nothing else
  elseif counter > 0 then
    local key = KEYS[counter]
    ttl = rcall('PTTL', key)
    if ttl <= 0 then
      rcall('SET', key, 1, 'PX', windowMs)
      total = 1
      ttl = windowMs
    else
      total = rcall('INCR', key)
    end
  end
  local verdict = 0
  if seen then verdict = 6
  elseif total > limit then verdict = 1
  elseif address ~= '' and isBlocked(address) then verdict = 5
  elseif not accepts then verdict = 2
  elseif generation ~= expected then verdict = 4
  elseif checkMessages >= 0 and (queued + checkMessages > maxMessages or queuedBytes + checkBytes > maxBytes) then
    verdict = 3
  end
  out[#out + 1] = verdict
  out[#out + 1] = total
  out[#out + 1] = ttl
  out[#out + 1] = queued
  out[#out + 1] = queuedBytes
  if verdict == 0 then
    queued = queued + messages
    queuedBytes = queuedBytes + bytes
    addedMessages = addedMessages + messages
    addedBytes = addedBytes + bytes
    local i = 1
    while i <= #items do
      local name, n = items[i], items[i + 1]
      if name == 'JOB' then
        ids[#ids + 1] = items[i + 3]
        bull[items[i + 2]](jobKeys[items[i + 2]], { items[i + 4], items[i + 5], items[i + 6] })
      else
        rcall(name, unpack(items, i + 2, i + 1 + n))
      end
      i = i + 2 + n
    end
  end
end
if addedMessages > 0 then rcall('HINCRBY', quota, 'messages', addedMessages) end
if addedBytes > 0 then rcall('HINCRBY', quota, 'bytes', addedBytes) end
if #ids > 0 then mgw_index(indexKey, seqKey, retention, ids) end
out[1], out[2], out[3], out[4] = accepts and 1 or 0, generation, queued, queuedBytes
return out
