-- Frees an Idempotency-Key whose request failed so that a retry should run
-- it again: only while it is still in flight for the same body.
-- KEYS[1] the request record. ARGV[1] the body hash.
local held = redis.call('GET', KEYS[1])
if not held then return 0 end
local r = cjson.decode(held)
if r.h == ARGV[1] and r.s == nil then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
