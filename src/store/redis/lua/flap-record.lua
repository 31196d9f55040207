-- Appends a key's create or close ("c" or "x" and the time, ms) to its list,
-- forgets those older than the window and beyond the newest kept, and keeps
-- the list for the window. KEYS[1] the key's transitions (list).
-- ARGV[1] c or x, ARGV[2] at (ms), ARGV[3] keep (ms), ARGV[4] most kept.
redis.call('RPUSH', KEYS[1], ARGV[1] .. ARGV[2])
redis.call('LTRIM', KEYS[1], -tonumber(ARGV[4]), -1)
local before = tonumber(ARGV[2]) - tonumber(ARGV[3])
while true do
  local first = redis.call('LINDEX', KEYS[1], 0)
  if not first or tonumber(string.sub(first, 2)) >= before then break end
  redis.call('LPOP', KEYS[1])
end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
