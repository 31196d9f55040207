-- Records the group a member is in, or forgets it (ARGV[1] empty). A script,
-- not a raw SET or DEL, so the layout guard refuses it on a frozen shard.
-- KEYS[1] the member's record. ARGV[1] the group key, or ''.
if ARGV[1] == '' then
  redis.call('DEL', KEYS[1])
else
  redis.call('SET', KEYS[1], ARGV[1])
end
return 1
