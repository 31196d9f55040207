-- Keeps an Idempotency-Key's answer in place of its in-flight record. A
-- script, not a raw SET, so the layout guard refuses it on a frozen shard.
-- KEYS[1] the request record. ARGV[1] the answered record (JSON), ARGV[2] how long it is kept (ms).
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
