-- renew-lease: the holder of a delivery's lease keeps it while its call
-- runs: the due time is pushed forward again, and only when the token is
-- still the holder's (a lease another worker took over is not taken back).
--
-- KEYS[1]  the shard's due queue   KEYS[2] the delivery (hash)
-- ARGV[1]  member   ARGV[2] lease token   ARGV[3] lease ms
--
-- Returns 1 when renewed, 0 when the lease was lost.
local held = redis.call('HMGET', KEYS[2], 'lease', 'status')
if held[1] ~= ARGV[2] or held[2] ~= 'pending' then return 0 end
redis.call('ZADD', KEYS[1], now_ms() + tonumber(ARGV[3]), ARGV[1])
return 1
