-- fan-out: moves a shard's outbox entries into one pending delivery per
-- adapter its route names (every adapter when it has none; every internal
-- line, named with '@', whatever its route), due now, each in its key's
-- order (lib/delivery.lua), and deletes them from the stream: all in one step.
--
-- KEYS[1]  the shard's outbox stream   KEYS[2] its due queue (zset)   KEYS[3] its age index (zset)
-- ARGV[1]  the shard's hash tag        ARGV[2] at most this many entries
-- ARGV[3]  how long a key's n-counter lives (ms)   ARGV[4..] adapter names
--
-- Returns how many entries moved.
local tag = ARGV[1]
local now = now_ms()
local entries = redis.call('XRANGE', KEYS[1], '-', '+', 'COUNT', ARGV[2])
for _, e in ipairs(entries) do
  local id, f = e[1], {}
  for i = 1, #e[2], 2 do f[e[2][i]] = e[2][i + 1] end
  local counter = tag .. ':n:' .. lp(f.kind, f.tenant, f.key, f.action)
  local n = redis.call('INCR', counter)
  redis.call('PEXPIRE', counter, ARGV[3])
  local scope = tag .. ':kf:' .. lp(f.kind, f.tenant, f.key)
  local seq = redis.call('INCR', tag .. ':seq')
  local routed = nil
  if f.route and f.route ~= '' then
    routed = {}
    for name in string.gmatch(f.route, '[^,]+') do routed[name] = true end
  end
  for a = 4, #ARGV do
    if not routed or routed[ARGV[a]] or string.sub(ARGV[a], 1, 1) == '@' then
      local m = id .. '.' .. ARGV[a]
      local order = tag .. ':ko:' .. lp(ARGV[a], f.kind, f.tenant, f.key)
      redis.call('HSET', tag .. ':x:' .. m, 'adapter', ARGV[a], 'tenant', f.tenant, 'kind', f.kind, 'action', f.action,
        'key', f.key, 'severity', f.severity, 'summary', f.summary, 'data', f.data, 'at', f.at, 'n', n,
        'retries', 0, 'attempts', '[]', 'status', 'pending', 'lease', '', 'scope', scope, 'order', order, 'seq', seq)
      redis.call('ZADD', order, seq, m)
      redis.call('ZADD', KEYS[2], now, m)
      redis.call('ZADD', KEYS[3], f.at, m)
    end
  end
  redis.call('XDEL', KEYS[1], id)
end
return #entries
