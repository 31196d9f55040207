-- sweep-dead-letters: dead letters parked longer than the retention, deleted
-- with their hash and their place in the key's failing set, one batch.
--
-- KEYS[1]  the shard's dead letters (zset member → when it died)
-- ARGV[1]  the shard's hash tag   ARGV[2] retention ms   ARGV[3] batch
--
-- Returns how many went.
local before = now_ms() - tonumber(ARGV[2])
local gone = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', before, 'LIMIT', 0, tonumber(ARGV[3]))
for _, m in ipairs(gone) do
  local hk = ARGV[1] .. ':x:' .. m
  local scope = redis.call('HGET', hk, 'scope')
  if scope then redis.call('SREM', scope, m) end
  redis.call('DEL', hk)
  redis.call('ZREM', KEYS[1], m)
end
return #gone
