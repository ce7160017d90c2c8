--[[
  The entries a device's suppression list may hold for the contact of an address (a phone or
  `<digits>@lid`): the address itself and, when the device's phone <-> LID map
  (keys.contactIdentities, same slot) knows the pair, the other identity.

  Defines:
    mgw_identities(map, address) -> { address, other? }
]]
local function mgw_identities(map, address)
  local lid = string.match(address, '^(%d+)@lid$')
  if lid then
    local phone = redis.call('HGET', map, 'l:' .. lid)
    if phone and phone ~= '' then return { address, phone } end
    return { address }
  end
  local known = redis.call('HGET', map, 'p:' .. address)
  if known then return { address, known .. '@lid' } end
  return { address }
end
