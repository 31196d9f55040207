-- The layout guard, first in every script. The caller's shard count is its
-- last argument, taken off here so the script sees only its own. A shard
-- whose keys moved to another count holds {oo:S}:mv:COUNT (the count they
-- moved to); a caller still on COUNT is answered OOMOVED before anything is
-- read or written, so no replica writes where the others no longer look.
-- Every shard a script's keys name is checked: on a single server one call
-- may hold several shards' keys.
local oo_count = table.remove(ARGV)
do
  local checked = {}
  for _, key in ipairs(KEYS) do
    local tag = string.match(key, '^{oo:%d+}')
    if tag and not checked[tag] then
      checked[tag] = true
      local to = redis.call('GET', tag .. ':mv:' .. oo_count)
      if to then return redis.error_reply('OOMOVED ' .. to) end
    end
  end
end
