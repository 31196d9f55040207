-- retry-dead-letter: a dead letter back in the queue, due now.
--
-- KEYS[1]  the delivery (hash)
-- ARGV[1]  the shard's hash tag   ARGV[2] member   ARGV[3] tenant, or '' for any
--
-- Returns 1 when re-queued, 0 when there is no such dead letter (for that tenant).
local f = redis.call('HMGET', KEYS[1], 'status', 'tenant')
if f[1] ~= 'dead' or (ARGV[3] ~= '' and f[2] ~= ARGV[3]) then return 0 end
requeue(ARGV[1], ARGV[2], now_ms())
return 1
