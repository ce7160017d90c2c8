--[[
  Whether the contact of an address is on a device's suppression list by either identity the
  device's phone <-> LID map knows for it.

  Input:
    KEYS[1] list: the device's suppression list (keys.optOuts)
    KEYS[2] map: the device's phone <-> LID hash (keys.contactIdentities)

    ARGV[1] address: a phone or `<digits>@lid`

  Output:
    1 when either identity is on the list, else 0
]]
--- @include "contact-identities"
for _, id in ipairs(mgw_identities(KEYS[2], ARGV[1])) do
  if redis.call('ZSCORE', KEYS[1], id) then return 1 end
end
return 0
