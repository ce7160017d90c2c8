--[[
  Updates a device's pairing record while it is still the pairing's that wrote it: a newer pairing
  of the same device (forceNew, another replica after a crash) owns the key then.

  Input:
    KEYS[1] record: the device's pairing hash (keys.pairing)

    ARGV[1] pairingId of the writer
    ARGV[2] new TTL (ms); 0 keeps the current one
    ARGV[3..] (field, value) pairs to set

  Output:
    1 when updated, 0 when the record is another pairing's (or gone)
]]
if redis.call('HGET', KEYS[1], 'pairingId') ~= ARGV[1] then return 0 end
for i = 3, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
if tonumber(ARGV[2]) > 0 then redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2])) end
return 1
