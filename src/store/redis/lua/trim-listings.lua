-- trim-listings: the sweep's pass over one shard: every tenant's listing
-- indexes lose what expired, so a tenant that stopped sending does not keep
-- them growing (lib/listing.lua). A tenant whose indexes emptied leaves the list.
--
-- KEYS[1]  the shard's list of tenants with indexes ({oo:S}:tl)
-- ARGV[1]  the shard's hash tag
--
-- Returns how many keys were trimmed.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local trimmed = 0
for _, id in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local seen, exp = ARGV[1] .. ':ti:' .. id, ARGV[1] .. ':tx:' .. id
  trimmed = trimmed + oo_list_trim(seen, exp, now, 1000)
  if redis.call('ZCARD', exp) == 0 then redis.call('SREM', KEYS[1], id) end
end
return trimmed
