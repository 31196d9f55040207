-- silence-changed: the version now, and every silence written after a
-- given version that Redis still keeps, in one step (one consistent read).
-- An entry whose silence Redis has already deleted (its retention after it
-- ended) is dropped from the index here.
--
-- KEYS[1] the silences by the version of their last write   KEYS[2] the version
-- ARGV[1] the version the caller loaded
-- Returns { version, json, ... }.
local out = { redis.call('GET', KEYS[2]) or '0' }
for _, k in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. ARGV[1], '+inf')) do
  local body = redis.call('GET', k)
  if body then out[#out + 1] = body else redis.call('ZREM', KEYS[1], k) end
end
return out
