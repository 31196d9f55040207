-- close-incident: delete an incident record; a close is not a premature expiry.
--
-- KEYS[1]  the incident record
-- KEYS[2]  the shard's outbox (a stream, same slot)
-- KEYS[3]  the key's resolution marker
-- KEYS[4]  the shard's live index
-- KEYS[5]  what the incident shows (a hash)
-- ARGV[1]  tenant   ARGV[2] key
-- ARGV[3]  an alert episode's end (ms) to record (the later one wins), or ""
-- ARGV[4]  how long the resolution is remembered (ms)
-- ARGV[5]  the key's member in the live index
-- ARGV[6]  the episode (its createdAt) the caller names, or "" for whatever is there
-- KEYS[6]  when the key's last live episode was closed (ms, the server's clock)
--
-- Returns {now, record} when it was live, or nil. An expired record kept for the
-- grace is deleted too, so the next arrival is a plain CREATE/new.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local v = redis.call('GET', KEYS[1])
-- Another episode than the one named (an id read earlier): nothing of this key is the caller's to close.
if ARGV[6] ~= '' and (not v or (read_incident(v)) ~= tonumber(ARGV[6])) then return nil end
if ARGV[3] ~= '' then
  local old = redis.call('GET', KEYS[3])
  local ended = ARGV[3]
  if old and tonumber(old) > tonumber(ended) then ended = old end
  redis.call('SET', KEYS[3], ended, 'PX', ARGV[4])
end
if not v then return nil end
redis.call('DEL', KEYS[1], KEYS[5])
redis.call('ZREM', KEYS[4], ARGV[5])
oo_list_drop(KEYS[1])
local c, d, l, _, _, fp, route = read_incident(v)
if c + d + l <= now then return nil end
-- Kept as long as a fail-open journal may still replay an arrival from before this close (an arrival
-- lives one TTL): reconcile-incident.lua reads it so that arrival does not open a new episode.
redis.call('SET', KEYS[6], string.format('%.0f', now), 'PX', l)
-- The close entry carries the last severity (the fingerprint is "SEVERITY|cleared"), and goes where the create went.
redis.call('XADD', KEYS[2], '*', 'tenant', ARGV[1], 'kind', 'incident', 'action', 'close', 'key', ARGV[2],
  'severity', string.match(fp, '^[^|]*'), 'summary', '', 'data', cjson.encode({fingerprint = fp}),
  'at', string.format('%.0f', now), 'route', route)
return {now, v}
