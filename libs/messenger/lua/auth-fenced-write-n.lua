--[[
  Applies writes to a device's auth state (credentials, Signal keys) only while the writer's lease
  epoch is the device's current one: a process that lost the lease (paused, then resumed after a
  failover) cannot roll the Signal ratchet back with stale keys. Every key is the device's (one
  slot).

  Input:
    KEYS[1] lease: the device's lease, JSON with its `epoch` (keys.lease)
    KEYS[2..] targets: the keys the ops write (op[1] is a target's index from 0)

    ARGV[1] epoch: the writer's lease epoch
    ARGV[2] ops: JSON array of [target, 'hset', field, value] | [target, 'hdel', field] |
            [target, 'set', value] | [target, 'del']

  Output:
    1 applied, 0 fenced (another epoch holds the lease), -1 the lease is missing (expired)
]]
local raw = redis.call('GET', KEYS[1])
if not raw then return -1 end
if tonumber(cjson.decode(raw).epoch) ~= tonumber(ARGV[1]) then return 0 end
for _, op in ipairs(cjson.decode(ARGV[2])) do
  local k = KEYS[op[1] + 2]
  if op[2] == 'hset' then redis.call('HSET', k, op[3], op[4])
  elseif op[2] == 'hdel' then redis.call('HDEL', k, op[3])
  elseif op[2] == 'set' then redis.call('SET', k, op[3])
  elseif op[2] == 'del' then redis.call('DEL', k) end
end
return 1
