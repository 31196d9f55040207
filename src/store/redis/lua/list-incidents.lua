-- list-incidents: one shard's part of a tenant's listing, most recently seen
-- first (lib/listing.lua). Keys whose record is gone (expired) are dropped
-- from the index as they are met.
--
-- KEYS[1]  the tenant's index in this shard ({oo:S}:ti:<len>.<tenant>)
-- ARGV[1]  the tenant   ARGV[2] how many keys at most
--
-- Returns {key, lastSeenAt, key, lastSeenAt, ...}.
local tag = string.match(KEYS[1], '^({oo:%d+})')
local prefix = tag .. ':i:' .. ARGV[1] .. ':'
local out = {}
local want, from = tonumber(ARGV[2]), 0
-- At most a few reads of the index: a long run of expired keys is left for the next call and the sweep.
for _ = 1, 4 do
  local page = redis.call('ZREVRANGE', KEYS[1], from, from + want - 1, 'WITHSCORES')
  if #page == 0 then break end
  local keys, score = {}, {}
  for i = 1, #page, 2 do keys[#keys + 1] = page[i]; score[page[i]] = page[i + 1] end
  local kept = oo_list_keep(KEYS[1], prefix, keys)
  for _, key in ipairs(kept) do
    out[#out + 1] = key
    out[#out + 1] = score[key]
  end
  if #out / 2 >= want or #page / 2 < want then break end
  from = from + #kept
end
return out
