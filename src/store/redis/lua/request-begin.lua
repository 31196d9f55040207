-- An Idempotency-Key's first use: record it in flight, unless a live record
-- holds it, which is returned as it is (its owner's JSON).
-- KEYS[1] the request record. ARGV[1] the in-flight record (JSON), ARGV[2] its lease (ms).
local held = redis.call('GET', KEYS[1])
if held then return held end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return false
