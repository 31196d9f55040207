-- trim-listings: the sweep's pass over one shard: every tenant's listing
-- index loses the keys whose record is gone (expired), oldest first, so a
-- tenant that stopped sending does not keep it growing (lib/listing.lua). A
-- tenant whose index emptied leaves the list.
--
-- KEYS[1]  the shard's list of tenants with an index ({oo:S}:tl)
-- ARGV[1]  how many keys of each tenant's index to look at
--
-- Returns how many keys were trimmed.
local tag = string.match(KEYS[1], '^({oo:%d+})')
local trimmed = 0
for _, id in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local index = tag .. ':ti:' .. id
  local tenant = string.match(id, '^%d+%.(.*)$')
  local oldest = redis.call('ZRANGE', index, 0, tonumber(ARGV[1]) - 1)
  trimmed = trimmed + #oldest - #oo_list_keep(index, tag .. ':i:' .. tenant .. ':', oldest)
  if redis.call('ZCARD', index) == 0 then redis.call('SREM', KEYS[1], id) end
end
return trimmed
