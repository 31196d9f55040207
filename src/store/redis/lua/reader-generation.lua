-- The least layout generation a replica needs to read this Redis
-- (store/contract/generation.ts), checked and raised in one step.
-- KEYS[1] the reader key; ARGV[1] the least generation that reads what the
-- caller writes, ARGV[2] the generation the caller reads.
-- Answers the generation held before. A caller that cannot read what is held
-- (held above its own) writes nothing: it is about to refuse to start.
local held = tonumber(redis.call('GET', KEYS[1]) or '0')
if held > tonumber(ARGV[2]) then return held end
if held < tonumber(ARGV[1]) then redis.call('SET', KEYS[1], ARGV[1]) end
return held
