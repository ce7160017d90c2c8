--[[
  The `contact` of a record's `to` (a phone or `<digits>@lid`) as the device's phone <-> LID map
  (`keys.contactIdentities`, in the record's slot) knows it, for the events scripts emit (see
  contact-identities.ts).

  Defines:
    mgw_contact(map, to) -> { phone?, lid? }, or nil for a `to` that is neither (a group)
]]
local function mgw_contact(map, to)
  local lid = string.match(to, '^(%d+)@lid$')
  if lid then
    local phone = redis.call('HGET', map, 'l:' .. lid)
    if phone and phone ~= '' then return { phone = phone, lid = to } end
    return { lid = to }
  end
  -- anything else that is not a phone number (a group's id) is no contact
  if not string.match(to, '^%d+$') then return nil end
  local known = redis.call('HGET', map, 'p:' .. to)
  if known then return { phone = to, lid = known .. '@lid' } end
  return { phone = to }
end
