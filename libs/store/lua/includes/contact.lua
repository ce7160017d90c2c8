--[[
  The `contact` of a record's `to` (a phone or `<digits>@lid`) as the device's phone <-> LID map
  (`keys.contactIdentities`, in the record's slot) knows it, for the events scripts emit (see
  contact-identities.ts), with the LID's username when the map has one (`n:<lid>`,
  contact-usernames.ts).

  Defines:
    mgw_contact(map, to) -> { phone?, lid?, username? }, or nil for a `to` that is neither (a group)
]]
local function mgw_contact(map, to)
  local contact
  local lid = string.match(to, '^(%d+)@lid$')
  if lid then
    local phone = redis.call('HGET', map, 'l:' .. lid)
    contact = { lid = to }
    if phone and phone ~= '' then contact.phone = phone end
  else
    -- anything else that is not a phone number (a group's id) is no contact
    if not string.match(to, '^%d+$') then return nil end
    contact = { phone = to }
    lid = redis.call('HGET', map, 'p:' .. to)
    if lid then contact.lid = lid .. '@lid' end
  end
  if lid then
    local username = redis.call('HGET', map, 'n:' .. lid)
    if username then contact.username = username end
  end
  return contact
end
