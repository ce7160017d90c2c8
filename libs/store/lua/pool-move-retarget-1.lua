--[[
  Points an unfinished move of a pooled message at another device: the device it was to go to
  refused it for good (it no longer takes messages: logged out meanwhile), so the message, already
  released on the device it left, would wait for nothing. Only while the journal still names that
  device, so two movers agree on one target (PoolMoves.retarget).

  Input:
    KEYS[1] the pool's move journal (keys.poolMoves)

    ARGV[1] messageId
    ARGV[2] the device the move names now (the one that refused it)
    ARGV[3] the device it goes to instead

  Output:
    1 when the move now names ARGV[3], 0 when it is finished or names another device already
]]
local stored = redis.call('HGET', KEYS[1], ARGV[1])
if not stored then return 0 end
local move = cjson.decode(stored)
if move['to'] ~= ARGV[2] then return 0 end
move['to'] = ARGV[3]
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(move))
return 1
