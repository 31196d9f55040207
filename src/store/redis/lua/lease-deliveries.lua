-- lease-deliveries: hands out a shard's due deliveries; the lease is the due
-- time pushed forward plus a fencing token, so a worker that dies lets it
-- fall due again and only the current holder can settle it. Only the oldest
-- unsettled delivery of a key to an adapter is handed out (lib/delivery.lua).
--
-- KEYS[1]  the shard's due queue
-- ARGV[1]  the shard's hash tag   ARGV[2] token   ARGV[3] lease ms   ARGV[4] at most this many
--
-- Returns { {member, {field, value, ...}}, ... }.
local now = now_ms()
local out = {}
for _, m in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, ARGV[4])) do
  local hk = ARGV[1] .. ':x:' .. m
  local order = redis.call('HGET', hk, 'order')
  local head = order and redis.call('ZRANGE', order, 0, 0)[1]
  -- A head whose delivery is gone (evicted under a maxmemory policy) must not hold the line forever.
  while head and head ~= m and redis.call('EXISTS', ARGV[1] .. ':x:' .. head) == 0 do
    redis.call('ZREM', order, head)
    head = redis.call('ZRANGE', order, 0, 0)[1]
  end
  if order and head ~= m then
    -- An earlier delivery of the same key to the same adapter is unsettled:
    -- this one waits (settling that one makes this due again at once).
    redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), m)
  elseif order or redis.call('EXISTS', hk) == 1 then
    redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), m)
    redis.call('HSET', hk, 'lease', ARGV[2])
    out[#out + 1] = { m, redis.call('HGETALL', hk) }
  else
    redis.call('ZREM', KEYS[1], m)
  end
end
return out
