--[[
  Takes one message of a cap window when the caps allow it (policy-admit-2.lua; message-claim-admit-8.lua
  takes it with the message's claim). Check and take are one step: with a read, then HINCRBY, two
  admissions running at once could both take the window's last unit.

  Defines:
    mgw_admit(usage, chats, phone, cap, fcap, ttlMs, group) -> 1, first (1 when the recipient is a
      first contact, else 0) when taken; 0, 'daily_cap' | 'first_contact_cap' (the cap that is used
      up) when not, with nothing written
  (`usage`: the window's counters `sent` and `firstContacts` (keys.deviceUsage); `chats`: the
  numbers the account has a chat with (keys.deviceChats); `cap`, `fcap`: numbers, -1 = none;
  `group`: true when the message can never be a first contact.)
]]
local function mgw_admit(usage, chats, phone, cap, fcap, ttlMs, group)
  local first = not group and redis.call('SISMEMBER', chats, phone) == 0
  local sent = tonumber(redis.call('HGET', usage, 'sent') or '0')
  if cap >= 0 and sent >= cap then return 0, 'daily_cap' end
  if first and fcap >= 0 and tonumber(redis.call('HGET', usage, 'firstContacts') or '0') >= fcap then
    return 0, 'first_contact_cap'
  end
  redis.call('HINCRBY', usage, 'sent', 1)
  if first then redis.call('HINCRBY', usage, 'firstContacts', 1) end
  redis.call('PEXPIRE', usage, tonumber(ttlMs))
  return 1, first and 1 or 0
end
