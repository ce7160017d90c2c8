--[[
  Marks that a send attempt of a message starts, and when (for the pacing of a sender that takes
  the device over); see MessageStore.claim. The batch's state is read here, in the script that
  starts the attempt: once a cancel's script ran, no message of the batch is claimed any more
  (whichever sender holds the device, before or after a failover), which is what lets the cancel
  answer "none of them will be sent". So is the device's pause: a pause that began while the
  message waited for its turn holds it. Claiming also ends the message's hold (`held`, and its
  place in the batch's held set).

  `sendingAt` marks an attempt under way (docs/architecture.md, "When a send began"): the attempt
  ends it as unsent (message-attempt-end-1.lua) when nothing of the message reached the socket, or
  leaves it and sets `sendBegan` when something may have. A claim that finds an earlier attempt's
  `sendingAt` still there (its process died mid-attempt, or could not record its end) cannot know
  whether that one wrote: it counts as begun (`sendBegan`), for good.

  Input:
    KEYS[1] record (keys.message)
    KEYS[2] WhatsApp-id mapping (keys.messageByPlatformId)
    KEYS[3] batch (keys.batch; the record key when the message is not of a batch)
    KEYS[4] the batch's held set (keys.batchHeld)
    KEYS[5] the device's pause (keys.deviceRestriction)
    KEYS[6] the device's last claim (keys.devicePace)

    ARGV[1] messageId
    ARGV[2] retention seconds
    ARGV[3] now (ms)
    ARGV[4] expiresAt (ms, or '')
    ARGV[5] base JSON: the record's fields from its job, set where missing
    ARGV[6] '1' when the message is of a batch
    ARGV[7] the last claim's TTL (s)
    ARGV[8] '1' to refuse a message an earlier attempt may have written ('unknown': an engine with
      no idempotency key, message-claim.lua)

  Output:
    'claimed', or why not: 'moved' (to another device of its pool), 'failed', 'sent', 'deleted', 'cancelled' / 'paused' (its batch),
    'expired', 'restricted' (the device is paused), 'unknown' (ARGV[8]: an earlier attempt may have
    written it)
]]
--- @include "message-claim"
local no = mgw_claim_refusal(KEYS[1], KEYS[3], KEYS[5], ARGV[3], ARGV[4], ARGV[6], ARGV[8])
if no then return no end
mgw_claim_take(KEYS[1], KEYS[2], KEYS[4], KEYS[6], ARGV[1], ARGV[2], ARGV[3], ARGV[5], ARGV[6], ARGV[7])
return 'claimed'
