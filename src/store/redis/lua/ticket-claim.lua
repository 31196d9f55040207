-- Records a receiver's ticket id for a key unless a live one is there;
-- answers the id that holds, kept for another lifetime either way.
-- KEYS[1] the ticket key. ARGV[1] the id, ARGV[2] its lifetime (ms).
local held = redis.call('GET', KEYS[1])
if held then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return held
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return ARGV[1]
