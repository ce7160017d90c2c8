--[[
  Sets a device's broker settings (PUT /events/brokers), each change bound to the place in the
  device's event log where it took effect: the log's last id now (XINFO's last-generated-id). The
  log is written by scripts too (`mgw_emit`), so every event logged before this step is at or
  before that id and every later one after it: the relay judges each event by the setting in
  force when it was logged, whenever it publishes it (a broker down meanwhile). A device without
  a log yet gets the setting as given: every event it will log comes after it.

  A transport's field is JSON: `{enabled, events, after, history}` — the setting, the log id it
  governs after (absent: every event), and the settings before it, newest first, each
  `{enabled, events, after}` (at most ARGV[1]; an event older than the oldest kept is not
  published). A field without `after` (never changed, or written by a release without
  boundaries) governs every event, and becomes the first entry of `history` at its first change.
  A setting put again unchanged leaves the field as it is. `events` is never empty (the API
  refuses `[]`), so an empty Lua table is not told apart from a missing list.

  Input:
    KEYS[1] the device's broker settings hash (`keys.brokerSettings`)
    KEYS[2] the device's event log (`keys.eventLog`, the same hash slot)

    ARGV[1] how many earlier settings a field keeps (BROKER_SETTING_HISTORY)
    ARGV[2..] per transport set, three arguments: the transport (the field), its new setting
      (JSON `{enabled, events?}`), and its default (JSON: what a device that never set it has)

  Output:
    the number of fields written (a setting put again unchanged is not)
]]
local cap = tonumber(ARGV[1])

-- No log: every event of the device is logged after this step, so the new setting governs them
-- all (stored as given, no boundary, no history).
local last = nil
if redis.call('EXISTS', KEYS[2]) == 1 then
  last = '0-0'
  local info = redis.call('XINFO', 'STREAM', KEYS[2])
  for i = 1, #info, 2 do
    if info[i] == 'last-generated-id' then
      last = info[i + 1]
      break
    end
  end
end

local function eventList(v)
  if type(v) == 'table' and #v > 0 then return v end
  return nil
end

local function decode(raw)
  local ok, v = pcall(cjson.decode, raw)
  if ok and type(v) == 'table' then return v end
  return nil
end

-- As the store reads a field: enabled unless it says false; every event type without a list.
local function same(a, b)
  if (a.enabled ~= false) ~= (b.enabled ~= false) then return false end
  local x, y = eventList(a.events), eventList(b.events)
  if x == nil or y == nil then return x == y end
  if #x ~= #y then return false end
  for i = 1, #x do
    if x[i] ~= y[i] then return false end
  end
  return true
end

local written = 0
for i = 2, #ARGV, 3 do
  local field, wanted = ARGV[i], ARGV[i + 1]
  local new = cjson.decode(wanted)
  local raw = redis.call('HGET', KEYS[1], field)
  -- Unset or unreadable: the default is in force (as the store reads it).
  local old = nil
  if raw then old = decode(raw) end
  local stored = old ~= nil
  if not old then old = cjson.decode(ARGV[i + 2]) end
  if last == nil then
    if raw ~= wanted then
      redis.call('HSET', KEYS[1], field, wanted)
      written = written + 1
    end
  elseif not same(old, new) then
    local before = { enabled = old.enabled ~= false, events = eventList(old.events) }
    if type(old.after) == 'string' then before.after = old.after end
    local history = { before }
    if type(old.history) == 'table' then
      for _, h in ipairs(old.history) do
        if #history >= cap then break end
        history[#history + 1] = h
      end
    end
    new.after = last
    new.history = history
    redis.call('HSET', KEYS[1], field, cjson.encode(new))
    written = written + 1
  elseif not stored then
    -- The default said explicitly: it governed every event already.
    redis.call('HSET', KEYS[1], field, wanted)
    written = written + 1
  end
end
return written
