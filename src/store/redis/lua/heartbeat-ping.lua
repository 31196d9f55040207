-- Records a heartbeat's ping now, watching it from now if it was not;
-- answers the record after the ping ("since,last,missed", empty for none).
-- KEYS[1] the tenant's heartbeat hash. ARGV[1] the name, ARGV[2] now (ms, the caller's clock).
local now = ARGV[2]
local rec = redis.call('HGET', KEYS[1], ARGV[1])
local since, missed = now, ''
if rec then
  local a, b, c = string.match(rec, '^([^,]*),([^,]*),([^,]*)$')
  since, missed = a, c
end
local out = since .. ',' .. now .. ',' .. missed
redis.call('HSET', KEYS[1], ARGV[1], out)
return out
