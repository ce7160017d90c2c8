--[[
  A viewer opened one of the device's status updates (a read receipt on status@broadcast): the
  view is kept on the status's record once per viewer, and `status.viewed` is emitted with it.
  The record names how many viewers the status had (`size`): no more views than that are kept.

  Input:
    KEYS[1] WhatsApp-id mapping (keys.messageByPlatformId)
    KEYS[2] webhook (keys.webhook)
    KEYS[3] event outbox (keys.eventOutbox)
    KEYS[4] event log (keys.eventLog)

    ARGV[1] status record key prefix (keys.statusRecord(deviceId, ''))
    ARGV[2] the viewer's JID
    ARGV[3] when it was viewed (ISO 8601)
    ARGV[4] events channel
    ARGV[5] deviceId
    ARGV[6] event id
    ARGV[7] event data JSON (without messageId: the mapping names it)

  Output:
    1 when the view is new (and emitted), 0 when already kept (or over the status's size),
    -1 when the WhatsApp id is no status of the device (unknown, or its record expired)
]]
--- @include "event-emit"
local mid = redis.call('GET', KEYS[1])
if not mid then return -1 end
local rec = ARGV[1] .. mid
local size = tonumber(redis.call('HGET', rec, 'size'))
if not size then return -1 end
local views = tonumber(redis.call('HGET', rec, 'views') or '0')
if views >= size then return 0 end
if redis.call('HSETNX', rec, 'v:' .. ARGV[2], ARGV[3]) == 0 then return 0 end
redis.call('HINCRBY', rec, 'views', 1)
local data = cjson.decode(ARGV[7])
data['messageId'] = mid
mgw_emit(KEYS[2], KEYS[3], KEYS[4], ARGV[4], ARGV[5], ARGV[6], 'status.viewed', ARGV[3], cjson.encode(data))
return 1
