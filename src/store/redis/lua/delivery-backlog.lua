-- delivery-backlog: a shard's pending and dead counts and the time of its
-- oldest entry still waiting (pending delivery or not yet fanned out).
--
-- KEYS[1] due queue   KEYS[2] age index   KEYS[3] dead letters   KEYS[4] outbox stream   KEYS[5] held set
--
-- Returns { pending, dead, oldest pending at or '', oldest outbox at or '', held }.
local oldest = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
local first = redis.call('XRANGE', KEYS[4], '-', '+', 'COUNT', 1)
local outboxAt = ''
if first[1] then
  local f = first[1][2]
  for i = 1, #f, 2 do if f[i] == 'at' then outboxAt = f[i + 1] end end
end
return { redis.call('ZCARD', KEYS[1]), redis.call('ZCARD', KEYS[3]), oldest[2] or '', outboxAt, redis.call('SCARD', KEYS[5]) }
