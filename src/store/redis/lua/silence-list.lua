-- silence-list: the silences an index names, in one step (those Redis has
-- already deleted are skipped).
--
-- KEYS[1] an index (a tenant's, or everyone's)
-- Returns { json, ... }.
local out = {}
for _, k in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  local v = redis.call('GET', k)
  if v then out[#out + 1] = v end
end
return out
