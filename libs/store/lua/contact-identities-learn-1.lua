--[[
  Keeps what a device learnt of its contacts in its phone <-> LID map: a phone with its LID (both
  ways: `p:<phone>` -> LID digits, `l:<lid>` -> phone), or a LID alone (`l:<lid>` -> "", a contact
  hiding its number; a phone learnt later fills it in). Bounded: a new pair is not kept once the map
  holds `maxPairs` fields, a new lone LID once it holds `max` (a known phone's pair is updated
  whatever the size).

  Input:
    KEYS[1] map: the device's phone <-> LID hash (keys.contactIdentities)

    ARGV[1] max: fields the map may hold
    ARGV[2] maxPairs: fields past which no new pair is kept
    ARGV[3..] (phone, LID digits) pairs; phone "" when only the LID is known

  Output:
    how many pairs did not fit the bound
]]
local key, max, maxPairs = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2])
local dropped = 0
for i = 3, #ARGV, 2 do
  local phone, lid = ARGV[i], ARGV[i + 1]
  local full = redis.call('HLEN', key) >= (phone == '' and max or maxPairs)
  if phone == '' then
    if redis.call('HEXISTS', key, 'l:' .. lid) == 0 then
      if full then dropped = dropped + 1 else redis.call('HSET', key, 'l:' .. lid, '') end
    end
  elseif full and redis.call('HEXISTS', key, 'p:' .. phone) == 0 then
    dropped = dropped + 1
  else
    redis.call('HSET', key, 'p:' .. phone, lid, 'l:' .. lid, phone)
  end
end
return dropped
