-- Starts watching a heartbeat now unless it is already watched.
-- KEYS[1] the tenant's heartbeat hash. ARGV[1] the name, ARGV[2] now (ms, the caller's clock).
redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2] .. ',,')
return 1
