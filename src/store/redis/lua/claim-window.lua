-- claim-window: the first claim of a windowed key (SPC violation) wins, and a
-- routed alarm goes to the outbox in the same step. A repeat that finds the
-- key's earlier deliveries failing (retrying or dead) re-queues them instead
-- of being suppressed (a partial failure stays eligible).
--
-- KEYS[1]  the window claim
-- KEYS[2]  the shard's outbox (a stream, same slot)
-- KEYS[3]  the key's failing deliveries (a set, same slot)
-- KEYS[4]  the shard's due queue
-- ARGV[1]  the claim's lifetime in ms
-- ARGV[2]  "1" to write a create entry when claimed, "" for none
-- ARGV[3]  tenant   ARGV[4] key   ARGV[5] severity   ARGV[6] summary   ARGV[7] data (JSON)
-- ARGV[8]  its route (adapter names joined by commas), or "" (every adapter)
-- ARGV[9]  the shard's hash tag
--
-- Returns 1 when this call claimed the key, 2 for a repeat that re-queued, 0 for a repeat.
local now = now_ms()
if not redis.call('SET', KEYS[1], '1', 'NX', 'PX', ARGV[1]) then
  if requeue_failing(KEYS[3], KEYS[4], ARGV[9], now) > 0 then return 2 end
  return 0
end
if ARGV[2] == '1' then
  redis.call('XADD', KEYS[2], '*', 'tenant', ARGV[3], 'kind', 'violation', 'action', 'create', 'key', ARGV[4],
    'severity', ARGV[5], 'summary', ARGV[6], 'data', ARGV[7], 'at', string.format('%.0f', now), 'route', ARGV[8])
end
return 1
