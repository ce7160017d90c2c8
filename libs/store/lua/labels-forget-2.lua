--[[
  Removes everything the device keeps of the account's labels (logout: they are not the next
  account's): the labels hash, the ids and every label's chats.

  Input:
    KEYS[1] labels: the device's labels hash (keys.labels); a label's chats are KEYS[1] .. ':<id>:chats'
    KEYS[2] ids: every label id the device keeps anything of -> its chat count (keys.labelIds)

  Output:
    how many keys were deleted
]]
local n = 0
for _, id in ipairs(redis.call('HKEYS', KEYS[2])) do
  n = n + redis.call('DEL', KEYS[1] .. ':' .. id .. ':chats')
end
return n + redis.call('DEL', KEYS[1], KEYS[2])
