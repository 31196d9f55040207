-- Clears a heartbeat's claimed miss while it is still the one of ARGV[2].
-- KEYS[1] the tenant's heartbeat hash. ARGV[1] the name, ARGV[2] the basis.
local rec = redis.call('HGET', KEYS[1], ARGV[1])
if not rec then return 0 end
local since, last, missed = string.match(rec, '^([^,]*),([^,]*),([^,]*)$')
if missed ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], since .. ',' .. last .. ',')
return 1
