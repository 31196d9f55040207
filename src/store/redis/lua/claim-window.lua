-- claim-window: the first claim of a windowed key (SPC violation) wins, and a
-- routed alarm goes to the outbox in the same step.
--
-- KEYS[1]  the window claim
-- KEYS[2]  the shard's outbox (a stream, same slot)
-- ARGV[1]  the claim's lifetime in ms
-- ARGV[2]  "1" to write a create entry when claimed, "" for none
-- ARGV[3]  tenant   ARGV[4] key   ARGV[5] severity   ARGV[6] summary   ARGV[7] data (JSON)
--
-- Returns 1 when this call claimed the key, 0 for a repeat.
if not redis.call('SET', KEYS[1], '1', 'NX', 'PX', ARGV[1]) then return 0 end
if ARGV[2] == '1' then
  local t = redis.call('TIME')
  redis.call('XADD', KEYS[2], '*', 'tenant', ARGV[3], 'kind', 'violation', 'action', 'create', 'key', ARGV[4],
    'severity', ARGV[5], 'summary', ARGV[6], 'data', ARGV[7],
    'at', string.format('%.0f', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)))
end
return 1
