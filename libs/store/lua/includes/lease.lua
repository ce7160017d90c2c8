--[[
  A lease with fencing: a string key with a TTL naming its holder and the epoch it was taken at,
  the epoch coming from a counter INCRemented on every take, so holders are totally ordered and a
  write checked against (holder, epoch) is refused to anyone who lost the lease meanwhile. Its
  value has one of two forms, each kept by the records that already use it (fmt, from ARGV):
  'json' `{"owner": …, "epoch": …}` (device leases) or 'token' `<owner>:<epoch>` (webhook
  delivery leases, whose token the notifier carries).

  Defines:
    leaseValue(fmt, owner, epoch) -> string: the value holding the lease at `epoch`
    leaseHolder(fmt, raw) -> owner, epoch: who holds a value read from the lease key
    leaseIsMine(fmt, raw, owner, epoch) -> boolean: `raw` is the value of (owner, epoch)
    leaseTake(key, fence, fmt, owner, ttlMs) -> epoch: takes the lease at the next epoch
]]
local function leaseValue(fmt, owner, epoch)
  if fmt == 'token' then return owner .. ':' .. epoch end
  return cjson.encode({owner = owner, epoch = epoch})
end

local function leaseHolder(fmt, raw)
  if fmt == 'token' then
    local owner, epoch = string.match(raw, '^(.*):(%d+)$')
    return owner, tonumber(epoch)
  end
  local lease = cjson.decode(raw)
  return lease.owner, tonumber(lease.epoch)
end

local function leaseIsMine(fmt, raw, owner, epoch)
  if not raw then return false end
  if fmt == 'token' then return raw == leaseValue(fmt, owner, epoch) end
  local holder, at = leaseHolder(fmt, raw)
  return holder == owner and at == tonumber(epoch)
end

local function leaseTake(key, fence, fmt, owner, ttlMs)
  local epoch = redis.call('INCR', fence)
  redis.call('SET', key, leaseValue(fmt, owner, epoch), 'PX', tonumber(ttlMs))
  return epoch
end
