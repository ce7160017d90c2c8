--[[
  Records how a send attempt that was claimed (message-claim-6.lua) ended without the message
  being sent; see MessageStore.endAttempt and docs/architecture.md, "When a send began".
  - It may have reached the socket (a frame of the message was handed to it: no ack came, the write
    timed out, an unknown error): `sendBegan`, for good. The message never moves to another device,
    a logout fails it, and an OTP can no longer be expired under it.
  - Nothing of it reached the socket (not connected, closed before the write, WhatsApp refused it
    with an error ack): the attempt's claim goes (`sendingAt`, only while it is this attempt's) and
    `unsentAttempts` counts it. The message is as movable as one never claimed.
  Nothing for a record that is gone (expired): a field set then would make a key with no TTL.

  Input:
    KEYS[1] record (keys.message)

    ARGV[1] the attempt's claim time (ms, as the claim wrote it in `sendingAt`)
    ARGV[2] '1' when the attempt may have reached the socket, '0' when it certainly did not

  Output:
    1 when recorded, 0 when not (no record, or the claim is another attempt's)
]]
local rec = KEYS[1]
if redis.call('EXISTS', rec) == 0 then return 0 end
if ARGV[2] == '1' then
  redis.call('HSET', rec, 'sendBegan', '1')
  return 1
end
if redis.call('HGET', rec, 'sendingAt') ~= ARGV[1] then return 0 end
redis.call('HDEL', rec, 'sendingAt')
redis.call('HINCRBY', rec, 'unsentAttempts', 1)
return 1
