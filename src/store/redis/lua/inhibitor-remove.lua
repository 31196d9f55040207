-- inhibitor-remove: forgets a source under every group it was recorded in.
--
-- KEYS[1] the source's groups (set)   ARGV[1] source
for _, g in ipairs(redis.call('SMEMBERS', KEYS[1])) do redis.call('ZREM', g, ARGV[1]) end
redis.call('DEL', KEYS[1])
return 1
