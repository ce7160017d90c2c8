--[[
  Changes a device's blocklist: replaces it whole (the blocklist query at connect), or adds or
  removes entries (a block, an unblock, WhatsApp's blocklist push). Never holds more than `max`
  entries: what does not fit is not kept (WhatsApp still refuses those sends itself).

  Input:
    KEYS[1] blocklist: the device's blocklist set (keys.blocklist)

    ARGV[1] action: 'replace', 'add' or 'remove'
    ARGV[2] max: the bound (BLOCKLIST_MAX)
    ARGV[3..n] entries: phones or `<digits>@lid`

  Output:
    how many entries did not fit
]]
local action, max = ARGV[1], tonumber(ARGV[2])
if action == 'remove' then
  for i = 3, #ARGV do redis.call('SREM', KEYS[1], ARGV[i]) end
  return 0
end
if action == 'replace' then redis.call('DEL', KEYS[1]) end
local size = redis.call('SCARD', KEYS[1])
local dropped = 0
for i = 3, #ARGV do
  if size < max then
    size = size + redis.call('SADD', KEYS[1], ARGV[i])
  elseif redis.call('SISMEMBER', KEYS[1], ARGV[i]) == 0 then
    dropped = dropped + 1
  end
end
return dropped
