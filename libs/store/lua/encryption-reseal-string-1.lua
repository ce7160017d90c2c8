--[[
  Writes a string key's value sealed under the current key, only while it is still the value that
  was read (compare-and-set): a concurrent writer always wins. The key keeps its TTL.

  Input:
    KEYS[1] the key

    ARGV[1] expected: the value read
    ARGV[2] next: the value sealed under the current key

  Output:
    1 when written, 0 when the value changed meanwhile
]]
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL') return 1 end
return 0
