-- Forgets a key's ticket id while it is still the one given.
-- KEYS[1] the ticket key. ARGV[1] the id.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
