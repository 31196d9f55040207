-- inhibitor-put: records (or extends) a source incident under an inhibition
-- rule and its `equal` values, for ttl ms on the server's clock. Every
-- inhibitor key is in the one `{oo:inh}` slot.
--
-- KEYS[1] the group (zset source → expiry ms)   KEYS[2] the source's groups (set, for its removal)
-- ARGV[1] source   ARGV[2] ttl ms
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])
redis.call('SADD', KEYS[2], KEYS[1])
-- Each key lives as long as its longest-lived member.
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
redis.call('PEXPIREAT', KEYS[1], last[2])
if redis.call('PTTL', KEYS[2]) < ttl then redis.call('PEXPIRE', KEYS[2], ttl) end
return 1
