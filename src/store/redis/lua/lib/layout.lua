-- The layout guard, first in every script. The caller's shard count is its
-- last argument, taken off here so the script sees only its own. A shard
-- whose keys moved to another count holds {oo:S}:mv:COUNT (the count they
-- moved to); a caller still on COUNT is answered OOMOVED before anything is
-- read or written, so no replica writes where the others no longer look.
-- Every key of a script is in the shard of its first, except in a call that
-- decides several claims at once on a single server: that script guards
-- each claim's shard itself, with oo_refused, before it writes anything.
local oo_count = table.remove(ARGV)
local oo_checked = {}
local function oo_refused(key)
  local tag = string.match(key, '^{oo:%d+}')
  if not tag or oo_checked[tag] then return nil end
  oo_checked[tag] = true
  local to = redis.call('GET', tag .. ':mv:' .. oo_count)
  if to then return redis.error_reply('OOMOVED ' .. to) end
  return nil
end
do
  local refused = KEYS[1] and oo_refused(KEYS[1])
  if refused then return refused end
end
