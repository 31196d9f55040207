-- Counts a key's answer against its tenant's bytes and says which form to
-- keep: 'whole' when the tenant's bytes stay within the bound with it (the
-- key's earlier bytes freed), otherwise 'digest'.
-- ARGV[1] the key's member, ARGV[2] how long the answer is kept (ms),
-- ARGV[3] the whole answer's bytes, ARGV[4] the digest's, ARGV[5] the most
-- bytes, ARGV[6] how long to keep the bound (ms).
local now = rq_now()
rq_prune(now)
local old = tonumber(redis.call('HGET', KEYS[2], ARGV[1]) or '0')
local total = tonumber(redis.call('GET', KEYS[3]) or '0')
local kept, size = 'whole', tonumber(ARGV[3])
if total - old + size > tonumber(ARGV[5]) then kept, size = 'digest', tonumber(ARGV[4]) end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], size)
redis.call('INCRBY', KEYS[3], size - old)
rq_keep(ARGV[6])
return kept
