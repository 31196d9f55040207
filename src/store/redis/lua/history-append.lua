-- Appends events to keys' histories (one shard's keys on a cluster; on a
-- single server, any shard's). An element is
-- "fold US count US first US last US gap US body" (US: byte 31): a run's
-- bookkeeping before the event's JSON body, built by the caller. An event
-- whose fold equals the list's last element's is counted into it; else its
-- element is pushed as given and the list trimmed to the newest ARGV[1].
-- Either way the elements past their time as of this append (last + keep)
-- go from the head, and the list is kept for keep after this append.
-- KEYS: the N histories, then for each its tenant's tally in its shard: the
-- bytes each of the tenant's lists there holds (a hash: list → bytes, and ""
-- → their sum) and when each list lapses (a zset: list → ms, the server's).
-- ARGV[1] most kept, ARGV[2] keep (ms), ARGV[3] N, ARGV[4] the bytes a
-- tenant's lists in one shard may hold ("" for no bound), then three per
-- key: fold ("" for none), last (ms), the element.
-- A pushed element past its tenant's bound is not kept. Returns how many
-- were not kept so.
-- On a single server one call carries every shard's keys: each key's shard
-- is guarded (lib/layout.lua) before anything is written, so a call is
-- refused whole or applied whole.
for _, key in ipairs(KEYS) do
  local refused = oo_refused(key)
  if refused then return refused end
end
local max = tonumber(ARGV[1])
local keep = tonumber(ARGV[2])
local lists = tonumber(ARGV[3])
local budget = tonumber(ARGV[4])
local US = '\31'
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
-- An element's run header, and where its body starts: the body (most of
-- the bytes) is copied only when the element is rewritten.
local function parse(s)
  local f, c, fa, la, g, at = string.match(s, '^([^\31]*)\31(%d+)\31(%d+)\31(%d+)\31(%d+)\31()')
  return f, tonumber(c), tonumber(fa), tonumber(la), tonumber(g), at
end
local function int(n)
  return string.format('%d', n)
end
-- Each tally met in this call: pruned of lapsed lists once, its sum read once.
local tallies = {}
local function tally(hb, hx)
  local s = tallies[hb]
  if s then return s end
  -- A list Redis expired on its own gives its bytes back here (at most 20 a call: each call adds at most its own keys).
  for _, gone in ipairs(redis.call('ZRANGEBYSCORE', hx, '-inf', now, 'LIMIT', 0, 20)) do
    if redis.call('EXISTS', gone) == 0 then
      local b = tonumber(redis.call('HGET', hb, gone) or '0')
      if b ~= 0 then redis.call('HINCRBY', hb, '', -b) end
      redis.call('HDEL', hb, gone)
      redis.call('ZREM', hx, gone)
    else
      redis.call('ZADD', hx, now + math.max(redis.call('PTTL', gone), 0), gone)
    end
  end
  s = { hx = hx, sum = tonumber(redis.call('HGET', hb, '') or '0') }
  tallies[hb] = s
  return s
end
local over = 0
for i = 1, lists do
  local key = KEYS[i]
  local hb, hx = KEYS[lists + 2 * i - 1], KEYS[lists + 2 * i]
  local s = tally(hb, hx)
  -- A list this tally has not counted (one a shard move adopted here, or kept from before the tally) is counted whole, once.
  if redis.call('HEXISTS', hb, key) == 0 then
    local held = 0
    for _, e in ipairs(redis.call('LRANGE', key, 0, -1)) do held = held + #e end
    if held > 0 then
      redis.call('HSET', hb, key, held)
      redis.call('HINCRBY', hb, '', held)
      s.sum = s.sum + held
    end
  end
  local b = 4 + (i - 1) * 3
  local fold, last, element = ARGV[b + 1], tonumber(ARGV[b + 2]), ARGV[b + 3]
  -- The list's length after this event (0: not written yet), and the bytes it gained.
  local n = 0
  local change = 0
  if fold ~= '' then
    local tail = redis.call('LINDEX', key, -1)
    -- Only an element that starts with this fold and the separator can fold: most do not, and are not parsed.
    if tail and string.sub(tail, 1, #fold + 1) == fold .. US then
      local _, c, fa, la, g, at = parse(tail)
      local _, count, first, _, gap = parse(element)
      g = math.max(g, gap, first - la)
      local folded = table.concat({ fold, int(c + count), int(fa), int(last), int(g), string.sub(tail, at) }, US)
      redis.call('LSET', key, -1, folded)
      change = #folded - #tail
      -- A folded key's list may hold older elements past their time: the head is looked at below.
      n = 2
    end
  end
  if n == 0 and budget and s.sum + #element > budget then
    over = over + 1
  else
    if n == 0 then
      n = redis.call('RPUSH', key, element)
      change = change + #element
      if n > max then
        for _, gone in ipairs(redis.call('LRANGE', key, 0, n - max - 1)) do change = change - #gone end
        redis.call('LTRIM', key, -max, -1)
      end
    end
    -- A list of one (a key's first event) has nothing older to drop.
    while n > 1 do
      local head = redis.call('LINDEX', key, 0)
      if not head then break end
      local _, _, _, la = parse(head)
      if la + keep > last then break end
      redis.call('LPOP', key)
      change = change - #head
    end
    redis.call('PEXPIRE', key, keep)
    if change ~= 0 then
      redis.call('HINCRBY', hb, key, change)
      redis.call('HINCRBY', hb, '', change)
      s.sum = s.sum + change
    end
    redis.call('ZADD', hx, now + keep, key)
  end
end
-- Each tally lives as long as the longest list it counts: once a call, not once a key.
for hb, s in pairs(tallies) do
  redis.call('PEXPIRE', hb, keep)
  redis.call('PEXPIRE', s.hx, keep)
end
return over
