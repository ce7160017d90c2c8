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
local usage, chats = KEYS[1], KEYS[2]
local cap, fcap = tonumber(ARGV[2]), tonumber(ARGV[3])
local first = ARGV[5] ~= '1' and redis.call('SISMEMBER', chats, ARGV[1]) == 0
local sent = tonumber(redis.call('HGET', usage, 'sent') or '0')
if cap >= 0 and sent >= cap then return {0, 'daily_cap'} end
if first and fcap >= 0 and tonumber(redis.call('HGET', usage, 'firstContacts') or '0') >= fcap then
  return {0, 'first_contact_cap'}
end
redis.call('HINCRBY', usage, 'sent', 1)
if first then redis.call('HINCRBY', usage, 'firstContacts', 1) end
redis.call('PEXPIRE', usage, tonumber(ARGV[4]))
return {1, first and 1 or 0}
