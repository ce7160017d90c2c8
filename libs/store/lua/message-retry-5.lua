--[[
  A recipient's retry receipt for one of the device's messages (its phone could not decrypt the
  copy it got and asks for it again), or the gateway's answer to one (the message re-sent), by
  the message's WhatsApp id. One step, so the count, the decision to answer and the
  `message.undecryptable` event that a count at the bound brings are written together.

  `ask`: counts the ask (`retriesAsked`, `retryLastAt`) and answers whether to re-send: yes while
  the asks are within the bound (ARGV[3], MESSAGE_RETRY_MAX) and the message was not deleted for
  everyone. The ask that reaches the bound marks the message undecryptable (`undecryptableAt`,
  once) and emits `message.undecryptable`, if no receipt said it was delivered or read (status
  still `sent`): the recipient's phone gives up about there (Baileys' phones after 5 asks), and
  the status stays `sent` (the contract's statuses are fixed).
  `answer`: counts a re-send (`retriesAnswered`, `retryLastAt`).

  Input:
    KEYS[1] WhatsApp-id mapping (keys.messageByPlatformId)
    KEYS[2] webhook (keys.webhook)
    KEYS[3] event outbox (keys.eventOutbox)
    KEYS[4] the device's phone <-> LID map (keys.contactIdentities)
    KEYS[5] event log (keys.eventLog)

    ARGV[1] `ask` or `answer`
    ARGV[2] now, ISO 8601
    ARGV[3] the bound: how many asks are answered (MESSAGE_RETRY_MAX)
    ARGV[4] record key prefix (keys.message(deviceId, ''))
    ARGV[5] device id
    ARGV[6] events channel (keys.eventsChannel)

  Output:
    { -2, 0, 0 } when the WhatsApp id is not ours (unknown, its mapping or record expired), else
    `ask`: { answer (1 re-send, 0 not), undecryptable (1 when this ask marked it), asks so far }
    `answer`: { 1, 0, re-sends so far }
]]
--- @include "event-emit"
--- @include "contact"
local mid = redis.call('GET', KEYS[1])
if not mid then return { -2, 0, 0 } end
local rec = ARGV[4] .. mid
if redis.call('EXISTS', rec) == 0 then return { -2, 0, 0 } end
local now = ARGV[2]
redis.call('HSET', rec, 'retryLastAt', now)
if ARGV[1] == 'answer' then
  return { 1, 0, redis.call('HINCRBY', rec, 'retriesAnswered', 1) }
end
local max = tonumber(ARGV[3])
local asked = redis.call('HINCRBY', rec, 'retriesAsked', 1)
local status = redis.call('HGET', rec, 'status')
local answer = 1
if asked > max or status == 'deleted' then answer = 0 end
local marked = 0
if asked >= max and status == 'sent' and redis.call('HSETNX', rec, 'undecryptableAt', now) == 1 then
  marked = 1
  local r = redis.call('HMGET', rec, 'messageId', 'to', 'platformMessageId', 'batchId', 'retriesAnswered')
  local deviceId = ARGV[5]
  local d = { deviceId = deviceId, messageId = r[1], to = r[2], platformMessageId = r[3], status = status,
    retries = { asked = asked, answered = tonumber(r[5] or '0') }, undecryptableAt = now }
  if r[4] then d.batchId = r[4] end
  if r[2] then d.contact = mgw_contact(KEYS[4], r[2]) end
  mgw_emit(KEYS[2], KEYS[3], KEYS[5], ARGV[6], deviceId, r[1] .. '.undecryptable', 'message.undecryptable', now, cjson.encode(d))
end
return { answer, marked, asked }
