--[[
  Keeps one label the device learned from app-state sync (`labels.edit`): created, renamed or
  recoloured (its sealed JSON stored), or deleted (its entry and its chats removed). A new label
  past `max` labels is not kept.

  Input:
    KEYS[1] labels: the device's labels hash (keys.labels); a label's chats are KEYS[1] .. ':<id>:chats'
    KEYS[2] ids: every label id the device keeps anything of -> how many chats carry it (keys.labelIds)

    ARGV[1] id: the label id (digits)
    ARGV[2] sealed: the label's sealed JSON, or '' when the label was deleted
    ARGV[3] max: labels per device (LABEL_LIMITS.labels)

  Output:
    1 kept (or deleted), 0 refused: the device already keeps `max` other labels
]]
local labels, ids, id = KEYS[1], KEYS[2], ARGV[1]
if ARGV[2] == '' then
  redis.call('HDEL', labels, id)
  redis.call('HDEL', ids, id)
  redis.call('DEL', labels .. ':' .. id .. ':chats')
  return 1
end
if redis.call('HEXISTS', ids, id) == 0 then
  if redis.call('HLEN', ids) >= tonumber(ARGV[3]) then return 0 end
  redis.call('HSET', ids, id, 0)
end
redis.call('HSET', labels, id, ARGV[2])
return 1
