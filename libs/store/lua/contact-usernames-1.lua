--[[
  Keeps or forgets the usernames a device resolved or met, in its phone <-> LID map (the same hash,
  so they are bounded with it and deleted with the device's credentials): `u:<username>` -> LID
  digits and `n:<lid digits>` -> username, both ways, and `l:<lid>` (the LID known, "" when its
  phone is not) so that a send to the LID may go. A username names one account at a time and an
  account has one username: a new pair drops what it contradicts (the username's old LID, the
  LID's old username), as contact-identities-learn-1.lua does for phones.

  Input:
    KEYS[1] map: the device's phone <-> LID hash (keys.contactIdentities)

    ARGV[1] mode: 'keep' or 'forget'
    ARGV[2] max: fields the map may hold ('keep'); a pair needing new fields past it is not kept
    ARGV[3..] 'keep': (username, LID digits) pairs; 'forget': usernames WhatsApp no longer knows

  Output:
    'keep': how many pairs did not fit the bound; 'forget': how many usernames were known
]]
local key, mode, max = KEYS[1], ARGV[1], tonumber(ARGV[2])
local count = 0
if mode == 'forget' then
  for i = 3, #ARGV do
    local name = ARGV[i]
    local lid = redis.call('HGET', key, 'u:' .. name)
    if lid then
      count = count + 1
      redis.call('HDEL', key, 'u:' .. name)
      if redis.call('HGET', key, 'n:' .. lid) == name then redis.call('HDEL', key, 'n:' .. lid) end
    end
  end
  return count
end
for i = 3, #ARGV, 2 do
  local name, lid = ARGV[i], ARGV[i + 1]
  local oldLid = redis.call('HGET', key, 'u:' .. name)
  local oldName = redis.call('HGET', key, 'n:' .. lid)
  local knownLid = redis.call('HEXISTS', key, 'l:' .. lid) == 1
  local adds = (oldLid and 0 or 1) + (oldName and 0 or 1) + (knownLid and 0 or 1)
  if adds > 0 and redis.call('HLEN', key) + adds > max then
    count = count + 1
  else
    if oldLid and oldLid ~= lid and redis.call('HGET', key, 'n:' .. oldLid) == name then
      redis.call('HDEL', key, 'n:' .. oldLid)
    end
    if oldName and oldName ~= name and redis.call('HGET', key, 'u:' .. oldName) == lid then
      redis.call('HDEL', key, 'u:' .. oldName)
    end
    redis.call('HSET', key, 'u:' .. name, lid, 'n:' .. lid, name)
    if not knownLid then redis.call('HSET', key, 'l:' .. lid, '') end
  end
end
return count
