--[[
  Writes a field of a message record only while the record exists (an expired record is never
  recreated without its TTL); HSETNX for the poll secret, so the first one stays.

  Input:
    KEYS[1] record (keys.message)

    ARGV[1] field
    ARGV[2] value
    ARGV[3] '1': only when the field is not set yet (HSETNX), else overwrite

  Output:
    1 when the record exists, 0 when not
]]
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if ARGV[3] == '1' then redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) else redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) end
return 1
