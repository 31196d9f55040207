-- silence-list: the silences an index names, in one step (those Redis has
-- already deleted are skipped).
--
-- KEYS[1] an index (a tenant's, or everyone's: key → end ms)
-- ARGV[1] the lowest end to list ('-inf', or '(MS': those ending after MS)
-- Returns { json, ... }.
local out = {}
for _, k in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], ARGV[1], '+inf')) do
  local v = redis.call('GET', k)
  if v then out[#out + 1] = v end
end
return out
