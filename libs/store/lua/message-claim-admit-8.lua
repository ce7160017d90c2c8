--[[
  A send attempt's claim (message-claim-6.lua) that also takes the message's unit of the device's
  caps (policy-admit-2.lua), in one atomic step: one round trip instead of two in a row, for a
  message with nothing to do between the two (no lookup at WhatsApp, no pacing turn to wait for;
  see services/sender send-gate.ts). Every reason not to claim is looked at first, then the caps:
  a message that is not claimed takes no unit, a message the caps hold is not claimed, and a
  claimed one has its unit. All keys are one device's (one slot).

  Input:
    KEYS[1] record (keys.message)
    KEYS[2] WhatsApp-id mapping (keys.messageByPlatformId)
    KEYS[3] batch (keys.batch; the record key when the message is not of a batch)
    KEYS[4] the batch's held set (keys.batchHeld)
    KEYS[5] the device's pause (keys.deviceRestriction)
    KEYS[6] the device's last claim (keys.devicePace)
    KEYS[7] usage: hash of the cap window's counters `sent` and `firstContacts` (keys.deviceUsage)
    KEYS[8] chats: set of the numbers the account has a chat with (keys.deviceChats)

    ARGV[1] messageId
    ARGV[2] retention seconds
    ARGV[3] now (ms)
    ARGV[4] expiresAt (ms, or '')
    ARGV[5] base JSON: the record's fields from its job, set where missing
    ARGV[6] '1' when the message is of a batch
    ARGV[7] the last claim's TTL (s)
    ARGV[8] phone: the recipient, as the caps count it
    ARGV[9] cap: messages per window; -1 = none
    ARGV[10] first-contact cap: first messages to numbers not in `chats`, per window; -1 = none
    ARGV[11] TTL (ms) of the usage hash, set on every take
    ARGV[12] '1' when the message can never be a first contact (a group's, a status, a channel post)
    ARGV[13] '1' to refuse a message an earlier attempt may have written (message-claim-6.lua's ARGV[8])

  Output:
    {'claimed', first} (first: 1 when the recipient is a first contact, else 0), or why not with 0:
    message-claim-6.lua's refusals ('moved', 'failed', 'sent', 'deleted', 'cancelled', 'paused',
    'expired', 'restricted', 'unknown'), or the cap that is used up ('daily_cap', 'first_contact_cap')
]]
--- @include "message-claim"
--- @include "policy-admit"
local no = mgw_claim_refusal(KEYS[1], KEYS[3], KEYS[5], ARGV[3], ARGV[4], ARGV[6], ARGV[13])
if no then return {no, 0} end
local ok, what = mgw_admit(KEYS[7], KEYS[8], ARGV[8], tonumber(ARGV[9]), tonumber(ARGV[10]), ARGV[11], ARGV[12] == '1')
if ok == 0 then return {what, 0} end
mgw_claim_take(KEYS[1], KEYS[2], KEYS[4], KEYS[6], ARGV[1], ARGV[2], ARGV[3], ARGV[5], ARGV[6], ARGV[7])
return {'claimed', what}
