--[[
  Applies a contact's vote or reaction to one of our records once (WhatsApp redelivers after a
  reconnect), on a record that exists (never recreating an expired one), and emits its event
  (sealed). A record keeps at most 320 such fields (MAX_PER_RECORD of message-kinds-store.ts,
  256, plus 64 of room) beside a field it already has.

  Input:
    KEYS[1] the dedupe key of the inbound message (keys.inboundByPlatformId, holding '': a vote or
      reaction has no record of its own)
    KEYS[2] the record voted on or reacted to (keys.message)
    KEYS[3] webhook (keys.webhook)
    KEYS[4] event outbox (keys.eventOutbox)
    KEYS[5] event log (keys.eventLog): every event, wanted by the webhook or not

    ARGV[1] retention seconds (of the dedupe key)
    ARGV[2] the record's field (the vote's or the reaction's)
    ARGV[3] the sealed value ('' deletes the field)
    ARGV[4] events channel
    ARGV[5] deviceId
    ARGV[6] event id
    ARGV[7] event type
    ARGV[8] timestamp (ISO 8601)
    ARGV[9] sealed event data

  Output:
    1 when applied (its event emitted), 0 when already seen
]]
--- @include "event-emit"
if not redis.call('SET', KEYS[1], '', 'NX', 'EX', tonumber(ARGV[1])) then return 0 end
if redis.call('EXISTS', KEYS[2]) == 1 then
  if ARGV[3] == '' then redis.call('HDEL', KEYS[2], ARGV[2])
  elseif redis.call('HEXISTS', KEYS[2], ARGV[2]) == 1 or redis.call('HLEN', KEYS[2]) < 320 then
    redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
  end
end
mgw_emit(KEYS[3], KEYS[4], KEYS[5], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[9], true)
return 1
