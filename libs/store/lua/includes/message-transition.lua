--[[
  A message's status transition, after the script that includes it named its keys `rec` (the
  record), `content` and `stats` (the device's queue counts): moves the record's status forward
  (never out of failed or deleted), announces each status once and in order, moves its batch's
  counts, and settles the message once (quota and content released). See message-transition-7.lua
  for its KEYS and ARGV; it ends the script (returns `changed`: 1 when the record changed, 0 when
  not, -1 when refused as claimed).

  Defines:
    nothing: it is the script's body, run in place (needs mgw_emit, mgw_contact,
    mgw_content_release and mgw_chat)
]]
local target, rank, ranks = ARGV[1], tonumber(ARGV[2]), cjson.decode(ARGV[3])
local retention = tonumber(ARGV[4])
-- Moved to another device of its pool (pool-release-4.lua): this device's record never changes again.
if redis.call('HEXISTS', rec, 'movedTo') == 1 then return 0 end
-- Unclaimed only: refused once a send attempt is under way or may have reached the socket.
if ARGV[8] == '1' and (redis.call('HEXISTS', rec, 'sendingAt') == 1 or redis.call('HEXISTS', rec, 'sendBegan') == 1) then
  return -1
end
local cur = redis.call('HGET', rec, 'status') or 'queued'
local changed, impliedDelivery = 0, '0'
local function apply(withStatus)
  if withStatus then redis.call('HSET', rec, 'status', target) end
  for k, v in pairs(cjson.decode(ARGV[5])) do redis.call('HSET', rec, k, v) end
  -- A read message was delivered, even when its delivery receipt never came on its own (or came
  -- after the read one: Baileys may merge the two updates of a message into its last).
  if target == 'read' and redis.call('HSETNX', rec, 'deliveredAt', redis.call('HGET', rec, 'readAt')) == 1 then
    impliedDelivery = '1'
  end
  changed = 1
end
if cur == 'failed' or cur == 'deleted' then
  -- final: nothing moves a message out of failed or deleted
elseif target == 'failed' then
  -- A failure after `sent` only where the engine reports one (ARGV[8] 'sent': the Cloud API's
  -- failed status); never after delivered or read.
  if cur == 'queued' or cur == 'scheduled' or (cur == 'sent' and ARGV[8] == 'sent') then apply(true) end
elseif ranks[cur] >= rank then
  -- A receipt can overtake the sender's own bookkeeping (it waits for the server ack): the record
  -- is already delivered/read, and the late "sent" only adds its sentAt.
  if target == 'sent' and redis.call('HEXISTS', rec, 'sentAt') == 0 then apply(false) end
else
  apply(true)
end
if changed == 1 or ARGV[7] == '1' then
  for k, v in pairs(cjson.decode(ARGV[6])) do redis.call('HSETNX', rec, k, v) end
  redis.call('EXPIRE', rec, retention)
  -- The content a text or attachment is shown from lives as long as the records that name it.
  local cid = redis.call('HGET', rec, 'contentId')
  if cid then redis.call('EXPIRE', ARGV[14] .. cid, retention, 'GT') end
end
if changed == 1 then
  local hook, outbox, log, deviceId, channel = KEYS[4], KEYS[5], KEYS[7], ARGV[9], ARGV[11]
  local function announce(status, timeField)
    local r = redis.call('HMGET', rec, 'messageId', 'to', 'platformMessageId', 'batchId', 'error', timeField)
    local d = { deviceId = deviceId, messageId = r[1], to = r[2], platformMessageId = r[3], status = status }
    if r[4] then d.batchId = r[4] end
    if r[2] then d.contact = mgw_contact(KEYS[6], r[2]) end
    if status == 'failed' and r[5] then d.error = r[5] end
    if status == 'deleted' then d.direction = 'outbound' end
    d[timeField] = r[6]
    mgw_emit(hook, outbox, log, channel, deviceId, r[1] .. '.' .. status, 'message.' .. status, r[6], cjson.encode(d),
      false, redis.call('HGET', rec, 'tp'))
    -- Announced once per message: a sent message enters its chat (GET /chats) here, once.
    if status == 'sent' and r[2] and ARGV[15] ~= '' then
      local now = redis.call('TIME')
      local chatType = 'direct'
      if string.sub(r[2], -5) == '@g.us' then chatType = 'group' end
      mgw_chat(ARGV[15], ARGV[16], r[2], r[1], tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000),
        r[6], 'outbound', retention, chatType, '', '', redis.call('HGET', rec, 'contentId') or '')
    end
    -- Activity chart: announced once per status per message, so counted here, in the UTC hour of
    -- the status's time (an ISO string: its first 13 characters, 2026-11-23T18, name the hour).
    if r[6] then
      local activity = ARGV[12] .. string.sub(r[6], 1, 13)
      redis.call('HINCRBY', activity, status, 1)
      redis.call('EXPIRE', activity, tonumber(ARGV[13]))
      -- Usage (a workspace's bill): the same count in the UTC day, a failure also by its reason.
      if status ~= 'deleted' then
        local usage = ARGV[17] .. string.sub(r[6], 1, 10)
        redis.call('HINCRBY', usage, status, 1)
        if status == 'failed' then redis.call('HINCRBY', usage, 'failed:' .. (r[5] or 'send_failed'), 1) end
        redis.call('EXPIRE', usage, tonumber(ARGV[18]))
      end
    end
  end
  local now = redis.call('HGET', rec, 'status')
  if now == 'failed' then
    -- Once; a failure after `sent` (whose evRank is a number by then) is announced too.
    if redis.call('HGET', rec, 'evRank') ~= 'failed' then
      redis.call('HSET', rec, 'evRank', 'failed')
      announce('failed', 'failedAt')
    end
  elseif redis.call('HEXISTS', rec, 'sentAt') == 1 then
    local done, rankNow = tonumber(redis.call('HGET', rec, 'evRank') or '0'), ranks[now]
    local steps = { { 'sent', 'sentAt' }, { 'delivered', 'deliveredAt' }, { 'read', 'readAt' } }
    for r = done + 1, rankNow do
      local step = steps[r]
      if step and redis.call('HEXISTS', rec, step[2]) == 1 then announce(step[1], step[2]) end
    end
    if rankNow > done then redis.call('HSET', rec, 'evRank', rankNow) end
  end
  -- Deleted for everyone (or, unsent, taken out of the queue): its own event, once.
  if now == 'deleted' and cur ~= 'deleted' then announce('deleted', 'deletedAt') end
  local batchId = redis.call('HGET', rec, 'batchId')
  -- Out of queued: not held any more (the record's hold and its place in the batch's held set).
  if cur == 'queued' and now ~= 'queued' then
    redis.call('HDEL', rec, 'heldReason', 'heldUntil')
    local mid = redis.call('HGET', rec, 'messageId')
    if batchId and mid then redis.call('SREM', ARGV[10] .. batchId .. ':held', mid) end
  end
  if batchId and now ~= cur then
    local batch = ARGV[10] .. batchId
    if redis.call('EXISTS', batch) == 1 then
      -- A scheduled send (its record has sendAt) waits in the batch's 'scheduled' count, not 'queued'.
      local from = cur
      if cur == 'queued' and redis.call('HEXISTS', rec, 'sendAt') == 1 then from = 'scheduled' end
      redis.call('HINCRBY', batch, from, -1)
      redis.call('HINCRBY', batch, now, 1)
      local waiting = tonumber(redis.call('HGET', batch, 'queued') or '0') + tonumber(redis.call('HGET', batch, 'scheduled') or '0')
      if (from == 'queued' or from == 'scheduled') and waiting <= 0 then
        local at = redis.call('HGET', rec, now .. 'At')
        if redis.call('HSETNX', batch, 'completedAt', at) == 1 then
          local b = redis.call('HMGET', batch, 'total', 'queued', 'sent', 'delivered', 'read', 'failed', 'deleted')
          local counts = { queued = tonumber(b[2] or '0'), sent = tonumber(b[3] or '0'),
            delivered = tonumber(b[4] or '0'), read = tonumber(b[5] or '0'), failed = tonumber(b[6] or '0'),
            deleted = tonumber(b[7] or '0') }
          local d = { deviceId = deviceId, batchId = batchId, total = tonumber(b[1] or '0'), counts = counts, completedAt = at }
          mgw_emit(hook, outbox, log, channel, deviceId, batchId .. '.completed', 'batch.completed', at, cjson.encode(d))
        end
      end
    end
  end
end
-- The message leaves the device's queue once, whatever its status became: quota back, and the
-- content (with its attachment bytes) released with the request's last message.
if ARGV[7] == '1' and redis.call('HSETNX', rec, 'settled', '1') == 1 then
  if redis.call('HINCRBY', stats, 'messages', -1) < 0 then redis.call('HSET', stats, 'messages', 0) end
  mgw_content_release(content, stats, rec)
end
-- A receipt (ARGV[20] set: message-receipt-7) that changed the record answers what its caller
-- counts and traces: whether it made the message delivered too, and (traced) its traceparent.
if changed == 1 and ARGV[20] then
  local tp = ''
  if ARGV[20] == '1' then tp = redis.call('HGET', rec, 'tp') or '' end
  return { impliedDelivery, tp }
end
return changed
