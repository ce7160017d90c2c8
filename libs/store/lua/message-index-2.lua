--[[
  Appends accepted messages' ids to the device's message index, in order (see the include
  `message-index`).

  Input:
    KEYS[1] message index (keys.messageIndex)
    KEYS[2] its sequence (keys.messageSeq)

    ARGV[1] retention seconds of the index and its sequence
    ARGV[2..] the message ids, in order

  Output:
    0
]]
--- @include "message-index"
local ids = {}
for i = 2, #ARGV do ids[#ids + 1] = ARGV[i] end
mgw_index(KEYS[1], KEYS[2], tonumber(ARGV[1]), ids)
return 0
