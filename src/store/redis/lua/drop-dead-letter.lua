-- drop-dead-letter: a dead letter deleted for good; the next delivery of its
-- key to its adapter, which waited behind it, is due now.
--
-- KEYS[1]  the delivery (hash)
-- ARGV[1]  the shard's hash tag   ARGV[2] member   ARGV[3] tenant, or '' for any
--
-- Returns 1 when dropped, 0 when there is no such dead letter (for that tenant).
local f = redis.call('HMGET', KEYS[1], 'status', 'tenant')
if f[1] ~= 'dead' or (ARGV[3] ~= '' and f[2] ~= ARGV[3]) then return 0 end
drop_dead(ARGV[1], ARGV[2], now_ms())
return 1
