-- The ticket id an adapter's receiver gave a key, kept for another lifetime
-- when there is one. A script, not a raw GETEX, so the layout guard refuses
-- it on a frozen shard like every other write.
-- KEYS[1] the ticket key. ARGV[1] the lifetime (ms).
local held = redis.call('GET', KEYS[1])
if held then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return held
