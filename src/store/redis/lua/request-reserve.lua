-- Counts a key against its tenant's bound before its record is begun:
-- 1 when it is counted (newly, or already), 0 when the tenant holds its
-- bound of keys and this one is not among them (nothing written).
-- ARGV[1] the key's member, ARGV[2] its lease (ms), ARGV[3] the most keys,
-- ARGV[4] how long to keep the bound (ms).
local now = rq_now()
rq_prune(now)
local until_ms = now + tonumber(ARGV[2])
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  redis.call('ZADD', KEYS[1], 'XX', 'GT', until_ms, ARGV[1])
  return 1
end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[1], until_ms, ARGV[1])
rq_keep(ARGV[4])
return 1
