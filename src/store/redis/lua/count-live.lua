-- count-live: how many incidents of one shard are live now, on the server's
-- clock; what expired is trimmed first (a shard no decision reaches any more
-- is trimmed by the count).
-- KEYS[1] the shard's live index.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
return redis.call('ZCARD', KEYS[1])
