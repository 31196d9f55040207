-- sweep-dead-letters: dead letters parked longer than the retention, deleted
-- as a drop deletes them (lib/delivery.lua drop_dead), one batch.
--
-- KEYS[1]  the shard's dead letters (zset member → when it died)
-- ARGV[1]  the shard's hash tag   ARGV[2] retention ms   ARGV[3] batch
--
-- Returns how many went.
local before = now_ms() - tonumber(ARGV[2])
local gone = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', before, 'LIMIT', 0, tonumber(ARGV[3]))
local now = now_ms()
for _, m in ipairs(gone) do drop_dead(ARGV[1], m, now) end
return #gone
