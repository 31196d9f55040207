-- Appends events to keys' histories (one shard's keys on a cluster; on a
-- single server, any shard's). An element is
-- "fold US count US first US last US gap US body" (US: byte 31): a run's
-- bookkeeping before the event's JSON body, built by the caller. An event
-- whose fold equals the list's last element's is counted into it; else its
-- element is pushed as given and the list trimmed to the newest ARGV[1].
-- Either way the elements past their time as of this append (last + keep)
-- go from the head, and the list is kept for keep after this append.
-- KEYS: the histories. ARGV[1] most kept, ARGV[2] keep (ms), then three per
-- key: fold ("" for none), last (ms), the element.
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
  local b = 2 + (i - 1) * 3
  local fold, last, element = ARGV[b + 1], tonumber(ARGV[b + 2]), ARGV[b + 3]
  -- The list's length after this event (0: not written yet).
  local n = 0
  if fold ~= '' then
    local tail = redis.call('LINDEX', key, -1)
    -- Only an element that starts with this fold and the separator can fold: most do not, and are not parsed.
    if tail and string.sub(tail, 1, #fold + 1) == fold .. US then
      local _, c, fa, la, g, at = parse(tail)
      local _, count, first, _, gap = parse(element)
      g = math.max(g, gap, first - la)
      redis.call('LSET', key, -1, table.concat({ fold, int(c + count), int(fa), int(last), int(g), string.sub(tail, at) }, US))
      -- A folded key's list may hold older elements past their time: the head is looked at below.
      n = 2
    end
  end
  if n == 0 then
    n = redis.call('RPUSH', key, element)
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
