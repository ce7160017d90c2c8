--[[
  A contact deleted a message it sent us: the inbound record reads `deleted`, its text, media
  reference, messageSecret and edits are dropped (the contact took them back), and `message.deleted` is emitted
  once. Only the contact who wrote it can delete it for everyone (by its phone or its LID).

  Input:
    KEYS[1] inbound record (keys.message)
    KEYS[2] webhook (keys.webhook)
    KEYS[3] event outbox (keys.eventOutbox)
    KEYS[4] event log (keys.eventLog): every event, wanted by the webhook or not

    ARGV[1] deletedAt (ISO 8601)
    ARGV[2] events channel
    ARGV[3] deviceId
    ARGV[4] event id
    ARGV[5] event data JSON
    ARGV[6] the contact's phone ('' when unknown)
    ARGV[7] the contact's LID ('' when unknown)

  Output:
    1 when the record was marked deleted, 0 when not
]]
--- @include "event-emit"
local rec = KEYS[1]
if redis.call('HGET', rec, 'direction') ~= 'inbound' then return 0 end
if redis.call('HEXISTS', rec, 'deletedAt') == 1 then return 0 end
-- Only the contact who wrote it can delete it for everyone (by its phone or its LID).
local by_phone = ARGV[6] ~= '' and redis.call('HGET', rec, 'from') == ARGV[6]
if not by_phone and not (ARGV[7] ~= '' and redis.call('HGET', rec, 'lid') == ARGV[7]) then return 0 end
redis.call('HSET', rec, 'deletedAt', ARGV[1])
redis.call('HDEL', rec, 'text', 'media', 'msgSecret')
for _, f in ipairs(redis.call('HKEYS', rec)) do
  -- 'edit:' is EDIT_FIELD of message-revisions.ts, the prefix of each edit's field
  if string.sub(f, 1, 5) == 'edit:' then redis.call('HDEL', rec, f) end
end
mgw_emit(KEYS[2], KEYS[3], KEYS[4], ARGV[2], ARGV[3], ARGV[4], 'message.deleted', ARGV[1], ARGV[5])
return 1
