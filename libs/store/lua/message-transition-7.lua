--[[
  Moves a message record to a status, atomically on keys of one device (one hash tag): what makes
  "settle exactly once" and "expire only if unclaimed" hold under concurrent senders, receipts and
  API calls; the same logic as GET-then-SET would race.

  Events (see events.ts) are emitted here, with the change: `message.<status>` in status order
  whatever order the changes arrive in (`evRank` remembers the last status announced, and nothing
  after `sent` is announced before `sentAt` is known: a receipt that overtook the sender's
  bookkeeping is announced right after the late `sent`). A batch's counts (`keys.batch`) move with
  the status (a scheduled send's from `scheduled`: its record has `sendAt`), and its last message
  leaving `queued`/`scheduled` emits `batch.completed`. The batch key is built from the record's
  batchId: it carries the device's hash tag, so it is in this slot; so is its held set
  (`<batch key>:held`), which a message leaves with `queued`. Each announced status is also counted
  once in the device's hourly activity (`keys.deviceActivity`, the hour of the status's own time),
  webhook or not; that key too is built here, in this slot, and so is its day's usage
  (`keys.deviceDayUsage`).

  Input:
    KEYS[1] record (keys.message)
    KEYS[2] content (keys.content; the record key when the message has none)
    KEYS[3] the device's queue stats (keys.deviceQueue)
    KEYS[4] webhook (keys.webhook)
    KEYS[5] event outbox (keys.eventOutbox)
    KEYS[6] the device's phone <-> LID map (keys.contactIdentities: each event's `contact`)
    KEYS[7] event log (keys.eventLog): every event, wanted by the webhook or not

    ARGV[1] target status
    ARGV[2] its rank
    ARGV[3] ranks JSON (status -> rank)
    ARGV[4] retention seconds
    ARGV[5] fields JSON, set with the status
    ARGV[6] base JSON: the record's fields from its job, set where missing
    ARGV[7] settle: '1' when this is the message's final outcome as the sender sees it
    ARGV[8] guard: '1' to refuse (-1) when a send attempt already started; 'sent' to let a failure
      follow `sent` too (the Cloud API reports a message it accepted as failed later, by webhook);
      '0' neither
    ARGV[9] deviceId
    ARGV[10] batch key prefix (keys.batch(id, ''))
    ARGV[11] events channel
    ARGV[12] activity key prefix (keys.deviceActivity(id, ''))
    ARGV[13] activity TTL seconds
    ARGV[14] content key prefix (keys.content(id, '')): the record's `contentId` names the content
      whose TTL follows the record's
    ARGV[15] the device's chat index (keys.chatIndex), or '' to leave chats alone: a message
      announced `sent` enters its chat there (chat-record.lua; built in this slot like the batch key)
    ARGV[16] chat key prefix (keys.chat(deviceId, ''))
    ARGV[17] usage key prefix (keys.deviceDayUsage(deviceId, '')): each announced status but `deleted`
      is also counted in the device's usage of its UTC day (a failure also as `failed:<reason>`)
    ARGV[18] usage TTL seconds

  Output:
    1 when the record changed, 0 when not, -1 when refused as claimed
]]
--- @include "event-emit"
--- @include "contact"
--- @include "content-release"
--- @include "chat-record"
local rec, content, stats = KEYS[1], KEYS[2], KEYS[3]
--- @include "message-transition"
