--[[
  Takes one message of a cap window when the caps allow it. Check and take are one step: with a
  read, then HINCRBY, two admissions running at once could both take the window's last unit. Both
  keys are one device's: one slot, so it runs on Redis Cluster.

  Input:
    KEYS[1] usage: hash of the window's counters `sent` and `firstContacts` (keys.deviceUsage)
    KEYS[2] chats: set of the numbers the account has a chat with (keys.deviceChats)

    ARGV[1] phone: the recipient
    ARGV[2] cap: messages per window; -1 = none
    ARGV[3] first-contact cap: first messages to numbers not in `chats`, per window; -1 = none
    ARGV[4] TTL (ms) of the usage hash, set on every take
    ARGV[5] '1' when the message can never be a first contact (a group's), else absent

  Output:
    {1, first} when taken (first: 1 when the recipient is a first contact, else 0)
    {0, 'daily_cap' | 'first_contact_cap'}: the cap that is used up
]]
--- @include "policy-admit"
local ok, what = mgw_admit(KEYS[1], KEYS[2], ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4], ARGV[5] == '1')
return {ok, what}
