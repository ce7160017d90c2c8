import { EMIT_LUA } from './events.js';
import { CONTACT_LUA } from './contact-identities.js';

/**
 * The Lua scripts of the message store. Each runs atomically on keys of one device (one hash
 * tag), which is what makes "settle exactly once" and "expire only if unclaimed" hold under
 * concurrent senders, receipts and API calls; the same logic as GET-then-SET would race.
 */

/** The transition's logic, after its keys are named (`rec`, `content`, `stats`): see TRANSITION_SCRIPT. */
const TRANSITION_BODY = `
local target, rank, ranks = ARGV[1], tonumber(ARGV[2]), cjson.decode(ARGV[3])
local retention = tonumber(ARGV[4])
if ARGV[8] == '1' and redis.call('HEXISTS', rec, 'sendingAt') == 1 then return -1 end
local cur = redis.call('HGET', rec, 'status') or 'queued'
local changed = 0
local function apply(withStatus)
  if withStatus then redis.call('HSET', rec, 'status', target) end
  for k, v in pairs(cjson.decode(ARGV[5])) do redis.call('HSET', rec, k, v) end
  -- A read message was delivered, even when its delivery receipt never came on its own.
  if target == 'read' then redis.call('HSETNX', rec, 'deliveredAt', redis.call('HGET', rec, 'readAt')) end
  changed = 1
end
if cur == 'failed' or cur == 'deleted' then
  -- final: nothing moves a message out of failed or deleted
elseif target == 'failed' then
  if cur == 'queued' or cur == 'scheduled' then apply(true) end
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
end
if changed == 1 then
  local hook, outbox, deviceId, channel = KEYS[4], KEYS[5], ARGV[9], ARGV[11]
  local function announce(status, timeField)
    local r = redis.call('HMGET', rec, 'messageId', 'to', 'platformMessageId', 'batchId', 'error', timeField)
    local d = { deviceId = deviceId, messageId = r[1], to = r[2], platformMessageId = r[3], status = status }
    if r[4] then d.batchId = r[4] end
    if r[2] then d.contact = mgw_contact(KEYS[6], r[2]) end
    if status == 'failed' and r[5] then d.error = r[5] end
    if status == 'deleted' then d.direction = 'outbound' end
    d[timeField] = r[6]
    mgw_emit(hook, outbox, channel, deviceId, r[1] .. '.' .. status, 'message.' .. status, r[6], cjson.encode(d))
    -- Activity chart: announced once per status per message, so counted here, in the UTC hour of
    -- the status's time (an ISO string: its first 13 characters, 2026-11-23T18, name the hour).
    if r[6] then
      local activity = ARGV[12] .. string.sub(r[6], 1, 13)
      redis.call('HINCRBY', activity, status, 1)
      redis.call('EXPIRE', activity, tonumber(ARGV[13]))
    end
  end
  local now = redis.call('HGET', rec, 'status')
  if now == 'failed' then
    if redis.call('HSETNX', rec, 'evRank', 'failed') == 1 then announce('failed', 'failedAt') end
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
  -- Out of queued: not held any more (the record's hold and its place in the list's held set).
  if cur == 'queued' and now ~= 'queued' then
    redis.call('HDEL', rec, 'heldReason', 'heldUntil')
    local mid = redis.call('HGET', rec, 'messageId')
    if batchId and mid then redis.call('SREM', ARGV[10] .. batchId .. ':held', mid) end
  end
  if batchId and now ~= cur then
    local batch = ARGV[10] .. batchId
    if redis.call('EXISTS', batch) == 1 then
      -- A scheduled send (its record has sendAt) waits in the list's 'scheduled' count, not 'queued'.
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
          mgw_emit(hook, outbox, channel, deviceId, batchId .. '.completed', 'batch.completed', at, cjson.encode(d))
        end
      end
    end
  end
end
-- The message leaves the device's queue once, whatever its status became: quota back, and the
-- content (with its attachment bytes) released with the request's last message.
if ARGV[7] == '1' and redis.call('HSETNX', rec, 'settled', '1') == 1 then
  if redis.call('HINCRBY', stats, 'messages', -1) < 0 then redis.call('HSET', stats, 'messages', 0) end
  if redis.call('EXISTS', content) == 1 then
    local left = redis.call('HINCRBY', content, 'remaining', -1)
    if left <= 0 then
      local bytes = tonumber(redis.call('HGET', content, 'bytes') or '0')
      -- bytes > 0: Lua prints -0 as "-0", which HINCRBY refuses (a content of no text, e.g. an edit)
      if bytes > 0 and redis.call('HINCRBY', stats, 'bytes', -bytes) < 0 then redis.call('HSET', stats, 'bytes', 0) end
      redis.call('DEL', content)
    end
  end
end
return changed
`;

/**
 * KEYS: record, content, device queue stats, webhook, event outbox, the device's phone <-> LID
 * map (each event's `contact`, see contact-identities.ts). ARGV: target status, its
 * rank, ranks JSON, retention seconds, fields JSON (set with the status), base JSON (the record's
 * fields from its job, set where missing), settle ('1': this is the message's final outcome as the
 * sender sees it), requireUnclaimed ('1': refuse (-1) when a send attempt already started),
 * deviceId, batch key prefix, events channel, activity key prefix (`keys.deviceActivity(id, '')`),
 * activity TTL seconds.
 * Returns 1 when the record changed, 0 when not, -1 when refused as claimed.
 *
 * Events (see events.ts) are emitted here, with the change: `message.<status>` in status order
 * whatever order the changes arrive in — `evRank` remembers the last status announced, and nothing
 * after `sent` is announced before `sentAt` is known (a receipt that overtook the sender's
 * bookkeeping is announced right after the late `sent`). A list's counts (`keys.batch`) move
 * with the status (a scheduled send's from `scheduled`: its record has `sendAt`), and its last
 * message leaving `queued`/`scheduled` emits `batch.completed`. The batch key is built from the
 * record's batchId: it carries the device's hash tag, so it is in this slot; so is its held set
 * (`<batch key>:held`), which a message leaves with `queued`.
 * Each announced status is also counted once in the device's hourly activity (`keys.deviceActivity`,
 * the hour of the status's own time), webhook or not; that key too is built here, in this slot.
 */
export const TRANSITION_SCRIPT = `${EMIT_LUA}${CONTACT_LUA}
local rec, content, stats = KEYS[1], KEYS[2], KEYS[3]
${TRANSITION_BODY}`;

/**
 * A receipt's transition, by the message's WhatsApp id: TRANSITION_SCRIPT with KEYS[1] the
 * WhatsApp-id mapping (`keys.messageByPlatformId`) instead of the record, whose key is built from
 * the id the mapping names (ARGV[14]: `keys.message(deviceId, '')`, in this device's slot), so a
 * receipt needs one script call instead of a read and then the script. The other keys and
 * arguments are the transition's (KEYS[2], the content, is not used: a receipt settles nothing).
 * Returns -2 when the WhatsApp id is not ours (unknown, or its mapping expired).
 */
export const RECEIPT_SCRIPT = `${EMIT_LUA}${CONTACT_LUA}
local mid = redis.call('GET', KEYS[1])
if not mid then return -2 end
local rec = ARGV[14] .. mid
local content, stats = rec, KEYS[3]
${TRANSITION_BODY}`;

/**
 * KEYS: record, WhatsApp-id mapping, batch (the record key when the message is not of a list),
 * the batch's held set, the device's pause (`keys.deviceRestriction`), the device's last claim
 * (`keys.devicePace`). ARGV: messageId, retention seconds, now (ms), expiresAt (ms or ''), base
 * JSON, '1' when the message is of a list, the last claim's TTL (s). Marks that a send attempt
 * starts, and when (for the pacing of a sender that takes the device over); see
 * MessageStore.claim. Returns 'claimed', or why not: 'failed', 'sent', 'deleted', 'cancelled' /
 * 'paused' (its list), 'expired', 'restricted' (the device is paused).
 *
 * The list's state is read here, in the script that starts the attempt: once a cancel's script
 * ran, no message of the list is claimed any more (whichever sender holds the device, before or
 * after a failover), which is what lets the cancel answer "none of them will be sent". So is the
 * device's pause: a pause that began while the message waited for its turn holds it. Claiming
 * also ends the message's hold (`held`, and its place in the list's held set).
 */
export const CLAIM_SCRIPT = `
local rec, byWa, batch, held = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local cur = redis.call('HGET', rec, 'status') or 'queued'
if cur == 'failed' then return 'failed' end
if cur ~= 'queued' and redis.call('HEXISTS', rec, 'sentAt') == 1 then return 'sent' end
-- Deleted while it waited (POST /send delete): never sent.
if cur == 'deleted' then return 'deleted' end
if ARGV[6] == '1' then
  local b = redis.call('HMGET', batch, 'cancelledAt', 'pausedAt')
  if b[1] then return 'cancelled' end
  if b[2] then return 'paused' end
end
if ARGV[4] ~= '' and tonumber(ARGV[3]) >= tonumber(ARGV[4]) then return 'expired' end
local pause = redis.call('HMGET', KEYS[5], 'reason', 'until')
if pause[1] and tonumber(pause[2] or '0') > tonumber(ARGV[3]) then return 'restricted' end
for k, v in pairs(cjson.decode(ARGV[5])) do redis.call('HSETNX', rec, k, v) end
redis.call('HSETNX', rec, 'status', 'queued')
redis.call('HSET', rec, 'sendingAt', ARGV[3])
redis.call('HDEL', rec, 'heldReason', 'heldUntil')
if ARGV[6] == '1' then redis.call('SREM', held, ARGV[1]) end
redis.call('EXPIRE', rec, tonumber(ARGV[2]))
redis.call('SET', byWa, ARGV[1], 'EX', tonumber(ARGV[2]))
redis.call('SET', KEYS[6], ARGV[3], 'EX', tonumber(ARGV[7]))
return 'claimed'
`;

/**
 * KEYS: record, batch (the record key when the message is not of a list), the batch's held set.
 * ARGV: messageId, reason, until (ISO 8601), retention seconds, '1' when the message is of a list.
 * Records why a queued message waits (`heldReason`, `heldUntil`) and adds it to its list's held
 * set; nothing for a message that left `queued` (it is sent or failed: not held). A `batch_paused`
 * hold of a list that is no longer paused is refused too (a resume ran meanwhile: the message goes
 * on instead). Returns 1 when held, 0 when not.
 */
export const HOLD_SCRIPT = `
local rec, batch, held = KEYS[1], KEYS[2], KEYS[3]
local cur = redis.call('HGET', rec, 'status') or 'queued'
if cur ~= 'queued' then return 0 end
if ARGV[2] == 'batch_paused' and redis.call('HEXISTS', batch, 'pausedAt') == 0 then return 0 end
redis.call('HSET', rec, 'heldReason', ARGV[2], 'heldUntil', ARGV[3])
redis.call('EXPIRE', rec, tonumber(ARGV[4]))
if ARGV[5] == '1' and redis.call('EXISTS', batch) == 1 then
  redis.call('SADD', held, ARGV[1])
  redis.call('EXPIRE', held, tonumber(ARGV[4]))
end
return 1
`;
