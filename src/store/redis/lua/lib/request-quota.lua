-- A tenant's Idempotency-Key bound (keys.ts: requestQuotaKeys), on the
-- server's clock as the records' PX expiries are.
-- KEYS[1] its keys (zset member → expiry ms), KEYS[2] their answers' bytes
-- (hash), KEYS[3] the sum of those bytes.
local function rq_forget(member)
  local size = tonumber(redis.call('HGET', KEYS[2], member) or '0')
  if size ~= 0 then redis.call('DECRBY', KEYS[3], size) end
  redis.call('HDEL', KEYS[2], member)
  redis.call('ZREM', KEYS[1], member)
end

-- Forgets up to 100 keys past their expiry (a bound on one call's work; each
-- call adds at most one, so they cannot pile up while the tenant is active).
local function rq_prune(now)
  for _, m in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, 100)) do rq_forget(m) end
end

-- An idle tenant's bound goes once every record it counted has expired.
local function rq_keep(ttl)
  for i = 1, 3 do redis.call('PEXPIRE', KEYS[i], ttl) end
end

local function rq_now()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
