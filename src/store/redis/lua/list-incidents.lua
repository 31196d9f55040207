-- list-incidents: one shard's part of a tenant's listing, most recently seen
-- first: what expired is trimmed from the tenant's indexes first (lib/listing.lua).
--
-- KEYS[1]  the tenant's index by last arrival in this shard ({oo:S}:ti:<len>.<tenant>)
-- KEYS[2]  the tenant's index by expiry in this shard ({oo:S}:tx:<len>.<tenant>)
-- ARGV[1]  how many keys at most
--
-- Returns {key, lastSeenAt, key, lastSeenAt, ...}.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
-- A bounded trim: a tenant with many expired keys is trimmed over several calls (and by the sweep),
-- never in one long script; expired keys sort last (by their last arrival) and the caller skips them.
oo_list_trim(KEYS[1], KEYS[2], now, 1000)
return redis.call('ZREVRANGE', KEYS[1], 0, tonumber(ARGV[1]) - 1, 'WITHSCORES')
