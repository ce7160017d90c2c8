--[[
  Which of some addresses are on a device's blocklist, by either identity the device's
  phone <-> LID map knows for each.

  Input:
    KEYS[1] blocklist: the device's blocklist set (keys.blocklist)
    KEYS[2] map: the device's phone <-> LID hash (keys.contactIdentities)

    ARGV[1..n] addresses: each a phone or `<digits>@lid`

  Output:
    one 1 (blocked) or 0 per address, in order
]]
--- @include "contact-identities"
local out = {}
for i, address in ipairs(ARGV) do
  out[i] = 0
  for _, id in ipairs(mgw_identities(KEYS[2], address)) do
    if redis.call('SISMEMBER', KEYS[1], id) == 1 then
      out[i] = 1
      break
    end
  end
end
return out
