-- Shared by the delivery scripts (prepended by scripts.ts). Every key these
-- touch carries the shard's hash tag, so they share the slot of the keys the
-- script was called with.
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- Length-prefixed by bytes, as keys.ts lpBytes: no two tuples make one key.
local function lp(...)
  local out = ''
  for _, p in ipairs({ ... }) do out = out .. #p .. '.' .. p end
  return out
end

-- Deliveries of one key to one adapter go out one at a time, oldest first:
-- a zset per (adapter, key) scored by fan-out sequence holds the unsettled
-- ones, and only its head may be leased (two calls in flight for one key
-- would both find no ticket and both create one). Settling the head makes
-- the next one due at once.
local function promote_next(order, due, now)
  local nxt = redis.call('ZRANGE', order, 0, 0)[1]
  if nxt then redis.call('ZADD', due, 'LT', now, nxt) end
end

-- A dead letter deleted for good (dropped, or swept after its retention): it
-- leaves its key's order, where it had kept its place, and the next is due now.
local function drop_dead(tag, m, now)
  local hk = tag .. ':x:' .. m
  local f = redis.call('HMGET', hk, 'order', 'scope')
  if f[1] then
    redis.call('ZREM', f[1], m)
    promote_next(f[1], tag .. ':q', now)
  end
  if f[2] then redis.call('SREM', f[2], m) end
  redis.call('DEL', hk)
  redis.call('ZREM', tag .. ':dl', m)
  redis.call('ZREM', tag .. ':q', m)
  redis.call('ZREM', tag .. ':a', m)
end

-- A delivery back in the queue, due now (or at its Retry-After floor `nb`),
-- with a fresh retry budget, in its place in its key's order.
local function requeue(tag, m, now)
  local hk = tag .. ':x:' .. m
  local order = redis.call('HMGET', hk, 'order', 'seq', 'nb')
  if order[1] then redis.call('ZADD', order[1], order[2], m) end
  redis.call('HSET', hk, 'status', 'pending', 'retries', 0, 'lease', '')
  redis.call('HDEL', hk, 'deadAt')
  redis.call('ZREM', tag .. ':dl', m)
  redis.call('ZADD', tag .. ':q', math.max(now, tonumber(order[3]) or 0), m)
  redis.call('ZADD', tag .. ':a', redis.call('HGET', hk, 'at'), m)
  redis.call('SREM', redis.call('HGET', hk, 'scope'), m)
end

-- A re-fire's re-queue: the key's failing deliveries (retrying or dead) that
-- no live lease holds are due now. Returns how many.
local function requeue_failing(failing, due, tag, now)
  local n = 0
  for _, m in ipairs(redis.call('SMEMBERS', failing)) do
    local lease = redis.call('HGET', tag .. ':x:' .. m, 'lease')
    if not lease then
      redis.call('SREM', failing, m)
    elseif lease == '' or tonumber(redis.call('ZSCORE', due, m) or 0) <= now then
      requeue(tag, m, now)
      n = n + 1
    end
  end
  return n
end
