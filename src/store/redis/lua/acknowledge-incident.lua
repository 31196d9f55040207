-- acknowledge-incident: the first acknowledgement of a live incident's
-- episode writes an `update` entry; repeats, and keys that are not live, do
-- nothing. One step, so an acknowledgement racing a close cannot update a
-- closed incident, and two racing acknowledgements update once.
--
-- KEYS[1]  the incident record
-- KEYS[2]  the shard's outbox (a stream, same slot)
-- KEYS[3]  the key's acknowledgement marker (holds the episode's createdAt)
-- ARGV[1]  tenant   ARGV[2] key   ARGV[3] the marker's lifetime in ms
-- ARGV[4]  the episode (its createdAt) the caller names, or "" for the live one
--
-- Returns "acknowledged", "repeat" or "absent".
local now = now_ms()
local v = redis.call('GET', KEYS[1])
if not v then return 'absent' end
local c, d, l, _, _, fp, route = read_incident(v)
if c + d + l <= now then return 'absent' end
if ARGV[4] ~= '' and c ~= tonumber(ARGV[4]) then return 'absent' end
local created = string.format('%.0f', c)
if redis.call('GET', KEYS[3]) == created then return 'repeat' end
redis.call('SET', KEYS[3], created, 'PX', ARGV[3])
redis.call('XADD', KEYS[2], '*', 'tenant', ARGV[1], 'kind', 'incident', 'action', 'update', 'key', ARGV[2],
  'severity', string.match(fp, '^[^|]*'), 'summary', 'acknowledged',
  'data', cjson.encode({fingerprint = fp, acknowledged = true}), 'at', string.format('%.0f', now), 'route', route)
return 'acknowledged'
