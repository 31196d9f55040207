-- Appends events to keys' histories (one shard's keys on a cluster; on a
-- single server, any shard's). An element is
-- "fold US count US first US last US gap US body" (US: byte 31): a run's
-- bookkeeping before the event's JSON body. An event whose fold equals the
-- list's last element's is counted into it; else it is pushed and the list
-- trimmed to the newest ARGV[1]. Either way the elements past their time as
-- of this append (last + keep) go from the head, and the list is kept for
-- keep after this append.
-- KEYS: the histories. ARGV[1] most kept, ARGV[2] keep (ms), then six per
-- key: fold ("" for none), count, first (ms), last (ms), gap (ms), body.
-- On a single server one call carries every shard's keys: each key's shard
-- is guarded (lib/layout.lua) before anything is written, so a call is
-- refused whole or applied whole.
for _, key in ipairs(KEYS) do
  local refused = oo_refused(key)
  if refused then return refused end
end
local max = tonumber(ARGV[1])
local keep = tonumber(ARGV[2])
local US = '\31'
-- An element's run header, and where its body starts: the body (most of
-- the bytes) is copied only when the element is rewritten.
local function parse(s)
  local f, c, fa, la, g, at = string.match(s, '^([^\31]*)\31(%d+)\31(%d+)\31(%d+)\31(%d+)\31()')
  return f, tonumber(c), tonumber(fa), tonumber(la), tonumber(g), at
end
local function int(n)
  return string.format('%d', n)
end
for i, key in ipairs(KEYS) do
  local b = 2 + (i - 1) * 6
  local fold, count, first, last, gap, body = ARGV[b + 1], tonumber(ARGV[b + 2]), tonumber(ARGV[b + 3]), tonumber(ARGV[b + 4]), tonumber(ARGV[b + 5]), ARGV[b + 6]
  local folded = false
  if fold ~= '' then
    local tail = redis.call('LINDEX', key, -1)
    if tail then
      local f, c, fa, la, g, at = parse(tail)
      if f == fold then
        g = math.max(g, gap, first - la)
        redis.call('LSET', key, -1, table.concat({ f, int(c + count), int(fa), int(last), int(g), string.sub(tail, at) }, US))
        folded = true
      end
    end
  end
  local n = 2
  if not folded then
    n = redis.call('RPUSH', key, table.concat({ fold, int(count), int(first), int(last), int(gap), body }, US))
    if n > max then redis.call('LTRIM', key, -max, -1) end
  end
  -- A list of one (a key's first event) has nothing older to drop.
  while n > 1 do
    local head = redis.call('LINDEX', key, 0)
    if not head then break end
    local _, _, _, la = parse(head)
    if la + keep > last then break end
    redis.call('LPOP', key)
  end
  redis.call('PEXPIRE', key, keep)
end
return 1
