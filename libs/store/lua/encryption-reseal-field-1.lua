--[[
  Writes a hash field's value sealed under the current key, only while it is still the value that
  was read (compare-and-set): a concurrent writer always wins.

  Input:
    KEYS[1] the hash

    ARGV[1] field
    ARGV[2] expected: the value read
    ARGV[3] next: the value sealed under the current key

  Output:
    1 when written, 0 when the value changed meanwhile
]]
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then redis.call('HSET', KEYS[1], ARGV[1], ARGV[3]) return 1 end
return 0
