-- inhibitor-find: the sources of a group whose record has not expired (at most ARGV[1]).
--
-- KEYS[1] the group (zset source → expiry ms)
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. now, '+inf', 'LIMIT', 0, tonumber(ARGV[1]))
