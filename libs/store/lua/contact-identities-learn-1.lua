--[[
  Keeps what a device learnt of its contacts in its phone <-> LID map: a phone with its LID (both
  ways: `p:<phone>` -> LID digits, `l:<lid>` -> phone), or a LID alone (`l:<lid>` -> "", a contact
  hiding its number; a phone learnt later fills it in). Bounded: a new pair is not kept once the map
  holds `maxPairs` fields, a new lone LID once it holds `max` (a known phone's pair, or a known
  LID's new phone, is updated whatever the size: it adds no field).

  A pair replaces what it contradicts (whatsmeow 563bcaa0, "delete old map entries when LID or
  phone number changes"): when the LID had another phone (the contact changed its number), that
  phone's entry goes if it still names this LID (the number may now be someone else's); when the
  phone had another LID (the number was registered again), that LID stays known but loses the
  phone if it still names it (`l:<old>` -> "": the old account may still write; whatsmeow deletes
  it, but here an `l:` entry is also what lets a reply reach a LID).

  Input:
    KEYS[1] map: the device's phone <-> LID hash (keys.contactIdentities)

    ARGV[1] max: fields the map may hold
    ARGV[2] maxPairs: fields past which no new pair is kept
    ARGV[3..] (phone, LID digits) pairs; phone "" when only the LID is known

  Output:
    { how many pairs did not fit the bound, then the phones whose pair changed: a LID's old phone
      and a phone that got another LID (their number-check answers may name the old LID) }
]]
local key, max, maxPairs = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2])
local dropped = 0
local out = { 0 }
for i = 3, #ARGV, 2 do
  local phone, lid = ARGV[i], ARGV[i + 1]
  local full = redis.call('HLEN', key) >= (phone == '' and max or maxPairs)
  if phone == '' then
    if redis.call('HEXISTS', key, 'l:' .. lid) == 0 then
      if full then dropped = dropped + 1 else redis.call('HSET', key, 'l:' .. lid, '') end
    end
  else
    local oldLid = redis.call('HGET', key, 'p:' .. phone)
    local oldPhone = redis.call('HGET', key, 'l:' .. lid)
    if full and not oldLid and not (oldPhone and oldPhone ~= '') then
      dropped = dropped + 1
    else
      redis.call('HSET', key, 'p:' .. phone, lid, 'l:' .. lid, phone)
      if oldPhone and oldPhone ~= '' and oldPhone ~= phone
        and redis.call('HGET', key, 'p:' .. oldPhone) == lid then
        redis.call('HDEL', key, 'p:' .. oldPhone)
        out[#out + 1] = oldPhone
      end
      if oldLid and oldLid ~= lid then
        if redis.call('HGET', key, 'l:' .. oldLid) == phone then redis.call('HSET', key, 'l:' .. oldLid, '') end
        out[#out + 1] = phone
      end
    end
  end
end
out[1] = dropped
return out
