-- Stops counting a key whose in-flight record was abandoned (deleted).
-- ARGV[1] the key's member.
rq_forget(ARGV[1])
return 1
