-- get-incident: read one incident record if it is live.
--
-- KEYS[1]  the incident record   KEYS[2] what it shows (a hash)
-- KEYS[3]  the key's acknowledgement marker (the createdAt of the episode acknowledged)
--
-- Returns {now, record, identity, latest, acked} while live (identity and
-- latest JSON, or "" for none; acked the marker, or ""), or nil (absent, or
-- expired and kept only for the grace).
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local v = redis.call('GET', KEYS[1])
if not v then return nil end
local c, d, l = string.match(v, '^(%d+),(%d+),(%d+),')
if tonumber(c) + tonumber(d) + tonumber(l) <= now then return nil end
local shown = redis.call('HMGET', KEYS[2], 'identity', 'latest')
return {now, v, shown[1] or '', shown[2] or '', redis.call('GET', KEYS[3]) or ''}
