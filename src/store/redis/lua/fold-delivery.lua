-- fold-delivery: folds the younger pending deliveries of a key to one adapter
-- into the head of its line, under the head's lease, then holds the head (a
-- mute) or releases it; all in one step. The rules are foldPlan's in
-- src/store/contract/deliveries.ts:
--   a close behind a create that never went out: both go, with what was
--   between (dropped); behind a create tried before (it may have reached the
--   receiver): what was between goes, the create takes the state just before
--   the close, and the close stays behind it (folded); a close behind anything else: the head and what was
--   between go, the close is due now (superseded); otherwise the younger ones
--   go and the head takes the latest one's payload (folded). A held close
--   (only flapping holds one) with the key opened again behind it: the close
--   and what was between go, and the last create or close is due now
--   (superseded).
--
-- KEYS[1] due queue   KEYS[2] age index   KEYS[3] the head (hash)   KEYS[4] the shard's held set
-- ARGV[1] the shard's hash tag   ARGV[2] the head's member   ARGV[3] lease token   ARGV[4] hold for (ms), or '' to release
--
-- Returns { outcome, folded, fields of the head when released }.
local tag, m = ARGV[1], ARGV[2]
local head = redis.call('HMGET', KEYS[3], 'lease', 'status', 'order', 'seq', 'action', 'attempts')
if head[1] ~= ARGV[3] or head[2] ~= 'pending' then return { 'lost', 0 } end
local now = now_ms()
local order = head[3]
local younger = {}
if order then
  for _, y in ipairs(redis.call('ZRANGEBYSCORE', order, '(' .. head[4], '+inf')) do
    local action = redis.call('HGET', tag .. ':x:' .. y, 'action')
    if action then younger[#younger + 1] = { m = y, action = action } end
  end
end
local function gone(member)
  local hk = tag .. ':x:' .. member
  local scope = redis.call('HGET', hk, 'scope')
  if scope then redis.call('SREM', scope, member) end
  if order then redis.call('ZREM', order, member) end
  redis.call('DEL', hk)
  redis.call('ZREM', KEYS[1], member)
  redis.call('ZREM', KEYS[2], member)
  redis.call('SREM', KEYS[4], member)
end
if head[5] == 'close' then
  local last = nil
  for i, y in ipairs(younger) do
    if y.action == 'create' or y.action == 'close' then last = i end
  end
  if last then
    for i = 1, last - 1 do gone(younger[i].m) end
    gone(m)
    redis.call('ZADD', KEYS[1], now, younger[last].m)
    return { 'superseded', last - 1 }
  end
end
local close = nil
for i, y in ipairs(younger) do
  if y.action == 'close' then close = i break end
end
local tried = head[6] and head[6] ~= '[]' and head[6] ~= ''
-- The head takes younger[i]'s state, and younger[1..i] go.
local function take(i)
  local latest = redis.call('HMGET', tag .. ':x:' .. younger[i].m, 'severity', 'summary', 'data', 'at')
  redis.call('HSET', KEYS[3], 'severity', latest[1], 'summary', latest[2], 'data', latest[3], 'at', latest[4])
  for j = 1, i do gone(younger[j].m) end
end
local folded = 0
if head[5] == 'create' and close and tried then
  if close > 1 then take(close - 1) end
  folded = close - 1
elseif head[5] ~= 'close' and close then
  local drop = close - 1
  if head[5] == 'create' then drop = close end
  for i = 1, drop do gone(younger[i].m) end
  gone(m)
  if head[5] == 'create' then
    -- What is left of the line (the key opened again after that close) is due at once.
    if order then promote_next(order, KEYS[1], now) end
    return { 'dropped', drop }
  end
  redis.call('ZADD', KEYS[1], now, younger[close].m)
  return { 'superseded', drop }
elseif head[5] ~= 'close' and #younger > 0 then
  take(#younger)
  folded = #younger
end
if ARGV[4] ~= '' then
  redis.call('HSET', KEYS[3], 'lease', '', 'held', 1)
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[4]), m)
  redis.call('SADD', KEYS[4], m)
  -- Out of the age index while held: a silence is not a delivery falling behind.
  redis.call('ZREM', KEYS[2], m)
  return { 'held', folded }
end
redis.call('HDEL', KEYS[3], 'held')
redis.call('SREM', KEYS[4], m)
redis.call('ZADD', KEYS[2], redis.call('HGET', KEYS[3], 'at'), m)
return { 'ready', folded, redis.call('HGETALL', KEYS[3]) }
