-- close-incident: delete an incident record; a close is not a premature expiry.
--
-- KEYS[1]  the incident record
--
-- Returns {now, record} when it was live, or nil. An expired record kept for the
-- grace is deleted too, so the next arrival is a plain CREATE/new.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local v = redis.call('GET', KEYS[1])
if not v then return nil end
redis.call('DEL', KEYS[1])
local c, d, l = string.match(v, '^(%d+),(%d+),(%d+),')
if tonumber(c) + tonumber(d) + tonumber(l) <= now then return nil end
return {now, v}
