-- Claims a heartbeat's miss of a basis (its last ping, or since, when never
-- pinged): only while that is still its basis and no miss of it is claimed.
-- KEYS[1] the tenant's heartbeat hash. ARGV[1] the name, ARGV[2] the basis.
local rec = redis.call('HGET', KEYS[1], ARGV[1])
if not rec then return 0 end
local since, last, missed = string.match(rec, '^([^,]*),([^,]*),([^,]*)$')
local basis = last
if basis == '' then basis = since end
if basis ~= ARGV[2] or missed == ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], since .. ',' .. last .. ',' .. ARGV[2])
return 1
