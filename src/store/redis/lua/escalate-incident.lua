-- escalate-incident: one escalation step of a live incident's episode. When
-- the episode is live, not acknowledged, due on the server's clock, and no
-- step this or later was written for it: records the step, adds the step's
-- adapters to the key's route (its later changes and its close reach them),
-- and writes the step's create to the outbox. One step, as an
-- acknowledgement and a close are on the same keys, so no step is written
-- after either, and none twice.
--
-- KEYS[1]  the incident record
-- KEYS[2]  the shard's outbox (a stream, same slot)
-- KEYS[3]  the key's acknowledgement marker (holds the episode's createdAt)
-- KEYS[4]  the key's escalation marker ("createdAt:step")
-- ARGV[1]  tenant   ARGV[2] key   ARGV[3] the episode (its createdAt)
-- ARGV[4]  the step   ARGV[5] its due time (ms)   ARGV[6] its adapters, joined by commas
-- ARGV[7]  severity   ARGV[8] summary   ARGV[9] data (JSON)   ARGV[10] the marker's lifetime (ms)
--
-- Returns "escalated", "done", "early", "acknowledged" or "absent".
local now = now_ms()
local v = redis.call('GET', KEYS[1])
if not v then return 'absent' end
local c, d, l, r, u, fp, route = read_incident(v)
if c + d + l <= now or c ~= tonumber(ARGV[3]) then return 'absent' end
local created = string.format('%.0f', c)
if redis.call('GET', KEYS[3]) == created then return 'acknowledged' end
local was = redis.call('GET', KEYS[4])
if was then
  local ep, st = string.match(was, '^(%d+):(%d+)$')
  if ep == created and tonumber(st) >= tonumber(ARGV[4]) then return 'done' end
end
if now < tonumber(ARGV[5]) then return 'early' end
redis.call('SET', KEYS[4], created .. ':' .. ARGV[4], 'PX', ARGV[10])
-- The step's adapters join the route, each once, in order (none: every adapter has it already).
if route ~= '' then
  local seen, joined = {}, {}
  for a in string.gmatch(route .. ',' .. ARGV[6], '[^,]+') do
    if not seen[a] then seen[a] = true; joined[#joined + 1] = a end
  end
  redis.call('SET', KEYS[1], incident_value(c, d, l, r, u, fp, table.concat(joined, ',')), 'KEEPTTL')
end
redis.call('XADD', KEYS[2], '*', 'tenant', ARGV[1], 'kind', 'incident', 'action', 'create', 'key', ARGV[2],
  'severity', ARGV[7], 'summary', ARGV[8], 'data', ARGV[9], 'at', string.format('%.0f', now), 'route', ARGV[6])
return 'escalated'
