--[[
  Appends one edit to a message record that exists and is not deleted (each edit its own field, so
  two edits never overwrite each other), makes its text the record's current one, and emits
  `message.edited` (its data sealed). Only the message's own chat may change it: named by its
  phone (our record's `to`, an inbound record's `from`) or by its LID. An edit already recorded
  (WhatsApp redelivers) changes nothing.

  Input:
    KEYS[1] record (keys.message)
    KEYS[2] webhook (keys.webhook)
    KEYS[3] event outbox (keys.eventOutbox)
    KEYS[4] event log (keys.eventLog): every event, wanted by the webhook or not

    ARGV[1] the edit's field (`edit:<ms, 15 digits>:<WhatsApp id of the edit>`)
    ARGV[2] the sealed edit entry
    ARGV[3] the sealed current text
    ARGV[4] retention seconds
    ARGV[5] events channel
    ARGV[6] deviceId
    ARGV[7] event id
    ARGV[8] editedAt (ISO 8601)
    ARGV[9] sealed event data
    ARGV[10] the contact's phone ('' when unknown)
    ARGV[11] its record field: `to` (ours) or `from` (an inbound message)
    ARGV[12] its LID ('': none; matched against an inbound record's `lid`)

  Output:
    1 when the edit was recorded, 0 when not
]]
--- @include "event-emit"
local rec = KEYS[1]
if redis.call('HEXISTS', rec, 'messageId') == 0 then return 0 end
if redis.call('HGET', rec, 'status') == 'deleted' or redis.call('HEXISTS', rec, 'deletedAt') == 1 then return 0 end
-- Only the message's own chat may change it (a contact edits only what it sent), named by its
-- phone (or our record's to) or by its LID.
local by_phone = ARGV[10] ~= '' and redis.call('HGET', rec, ARGV[11]) == ARGV[10]
if not by_phone and not (ARGV[12] ~= '' and redis.call('HGET', rec, 'lid') == ARGV[12]) then return 0 end
if redis.call('HSETNX', rec, ARGV[1], ARGV[2]) == 0 then return 0 end
redis.call('HSET', rec, 'text', ARGV[3])
redis.call('EXPIRE', rec, tonumber(ARGV[4]))
mgw_emit(KEYS[2], KEYS[3], KEYS[4], ARGV[5], ARGV[6], ARGV[7], 'message.edited', ARGV[8], ARGV[9], true)
return 1
