-- close-incident: delete an incident record; a close is not a premature expiry.
--
-- KEYS[1]  the incident record
-- KEYS[2]  the shard's outbox (a stream, same slot)
-- ARGV[1]  tenant   ARGV[2] key
--
-- Returns {now, record} when it was live, or nil. An expired record kept for the
-- grace is deleted too, so the next arrival is a plain CREATE/new.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local v = redis.call('GET', KEYS[1])
if not v then return nil end
redis.call('DEL', KEYS[1])
local c, d, l, fp = string.match(v, '^(%d+),(%d+),(%d+),%d+,%d+,(.*)$')
if tonumber(c) + tonumber(d) + tonumber(l) <= now then return nil end
-- The close entry carries the last severity (the fingerprint is "SEVERITY|cleared").
redis.call('XADD', KEYS[2], '*', 'tenant', ARGV[1], 'kind', 'incident', 'action', 'close', 'key', ARGV[2],
  'severity', string.match(fp, '^[^|]*'), 'summary', '', 'data', cjson.encode({fingerprint = fp}),
  'at', string.format('%.0f', now))
return {now, v}
