-- list-dead-letters: a shard's dead letters, oldest first.
--
-- KEYS[1]  dead letters (zset)
-- ARGV[1]  the shard's hash tag   ARGV[2] tenant, or '' for all   ARGV[3] at most this many
--
-- Returns { {member, {field, value, ...}, waiting}, ... }: waiting, the later
-- deliveries of its key to its adapter held behind it.
local out = {}
for _, m in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  if #out >= tonumber(ARGV[3]) then break end
  local h = redis.call('HGETALL', ARGV[1] .. ':x:' .. m)
  local tenant, order, seq
  for i = 1, #h, 2 do
    if h[i] == 'tenant' then tenant = h[i + 1] elseif h[i] == 'order' then order = h[i + 1] elseif h[i] == 'seq' then seq = h[i + 1] end
  end
  if ARGV[2] == '' or tenant == ARGV[2] then
    local waiting = (order and seq) and redis.call('ZCOUNT', order, '(' .. seq, '+inf') or 0
    out[#out + 1] = { m, h, waiting }
  end
end
return out
