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

-- A delivery back in the queue, due now, with a fresh retry budget.
local function requeue(tag, m, now)
  local hk = tag .. ':x:' .. m
  redis.call('HSET', hk, 'status', 'pending', 'retries', 0, 'lease', '')
  redis.call('HDEL', hk, 'deadAt')
  redis.call('ZREM', tag .. ':dl', m)
  redis.call('ZADD', tag .. ':q', now, m)
  redis.call('ZADD', tag .. ':a', redis.call('HGET', hk, 'at'), m)
  redis.call('SREM', redis.call('HGET', hk, 'scope'), m)
end
