-- settle-delivery: the outcome of one leased delivery, only from the holder
-- of its current lease.
--
-- KEYS[1]  due queue   KEYS[2] age index   KEYS[3] dead letters (zset)   KEYS[4] the delivery (hash)
-- KEYS[5]  the shard's held set (a delivered or dead one is held no more)
-- ARGV[1]  member      ARGV[2] lease token ARGV[3] delivered | retry | dead
-- ARGV[4]  retry delay ms   ARGV[5] error   ARGV[6] attempts kept
-- ARGV[7]  the receiver's Retry-After ms (0: none): kept as the floor `nb`
--          below which a re-queue never makes it due
--
-- Returns 1 when settled, 0 when the lease was lost (nothing changed).
local hk, m = KEYS[4], ARGV[1]
local held = redis.call('HMGET', hk, 'lease', 'status', 'scope', 'attempts', 'order')
if held[1] ~= ARGV[2] or held[2] ~= 'pending' then return 0 end
local now = now_ms()
-- Delivered, it leaves its key's order and the next one is due now. Dead, it
-- keeps its place: what comes after it waits until it is retried or dropped,
-- so a receiver never gets a key's close before the create it refused.
local function leave_order()
  if held[5] then
    redis.call('ZREM', held[5], m)
    promote_next(held[5], KEYS[1], now)
  end
end
redis.call('SREM', KEYS[5], m)
if ARGV[3] == 'delivered' then
  leave_order()
  redis.call('DEL', hk)
  redis.call('ZREM', KEYS[1], m)
  redis.call('ZREM', KEYS[2], m)
  redis.call('SREM', held[3], m)
  return 1
end
local attempts = cjson.decode(held[4])
attempts[#attempts + 1] = { at = now, error = ARGV[5] }
while #attempts > tonumber(ARGV[6]) do table.remove(attempts, 1) end
redis.call('HSET', hk, 'attempts', cjson.encode(attempts), 'lease', '')
redis.call('HINCRBY', hk, 'retries', 1)
redis.call('SADD', held[3], m)
if ARGV[3] == 'retry' then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[4]), m)
  local floor = tonumber(ARGV[7] or '0')
  if floor > 0 and now + floor > (tonumber(redis.call('HGET', hk, 'nb')) or 0) then redis.call('HSET', hk, 'nb', now + floor) end
else
  redis.call('ZREM', KEYS[1], m)
  redis.call('ZREM', KEYS[2], m)
  redis.call('ZADD', KEYS[3], now, m)
  redis.call('HSET', hk, 'status', 'dead', 'deadAt', now)
end
return 1
