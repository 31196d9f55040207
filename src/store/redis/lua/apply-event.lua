-- apply-event: a device status event applied once, in order, in ONE atomic step.
--
-- KEYS[1]  the device hash (boot, seq, state, obs; gaps: missing sequence numbers in all)
-- KEYS[2]  the seen-marker of this identity (tenant, device, boot, sequence)
-- KEYS[3]  the set of boots seen for the device
-- KEYS[4]  the shard's outbox (a stream)
-- KEYS[5]  the shard's freshness index (a sorted set: member = device, score = observed_at ms)
-- ARGV[1]  tenant        ARGV[2] device      ARGV[3] boot
-- ARGV[4]  sequence      ARGV[5] state       ARGV[6] observed_at (ms)
-- ARGV[7]  retention of the seen-marker (ms)
-- ARGV[8]  the device's member name in KEYS[5]
-- ARGV[9]  observed_at as RFC 3339 (for the outbox entry)
-- ARGV[10] the notify entry's route (adapter names joined by commas), or "" (every adapter)
-- The tenant's own index of its devices in this shard, {oo:S}:tf:<len>.<tenant>
-- (member = device, score = observed_at), is what a tenant's device listing
-- reads; its key is made from KEYS[5]'s shard tag (one slot with it).
--
-- Returns {outcome, reason, gapFrom, gapTo, transitionFrom, transitionTo}
--   outcome: "applied" | "duplicate" | "rejected"; reason: "" | "stale_sequence" | "stale_boot"
--   gapFrom/gapTo: -1 when there is no gap; transition fields "" when the state did not change.
-- Only applied events are marked seen; every key shares the device's hash slot.
if redis.call('EXISTS', KEYS[2]) == 1 then return {'duplicate', '', -1, -1, '', ''} end
local boot, seq, state = ARGV[3], tonumber(ARGV[4]), ARGV[5]
local cur = redis.call('HMGET', KEYS[1], 'boot', 'seq', 'state')
local gapFrom, gapTo, from = -1, -1, ''
if cur[1] then
  if cur[1] == boot then
    local last = tonumber(cur[2])
    if seq <= last then return {'rejected', 'stale_sequence', -1, -1, '', ''} end
    if seq > last + 1 then gapFrom, gapTo = last + 1, seq - 1 end
  elseif redis.call('SISMEMBER', KEYS[3], boot) == 1 then
    return {'rejected', 'stale_boot', -1, -1, '', ''}
  end
  if cur[3] ~= state then from = cur[3] end
end
redis.call('HSET', KEYS[1], 'boot', boot, 'seq', ARGV[4], 'state', state, 'obs', ARGV[6])
if gapFrom >= 0 then redis.call('HINCRBY', KEYS[1], 'gaps', gapTo - gapFrom + 1) end
redis.call('SADD', KEYS[3], boot)
redis.call('SET', KEYS[2], '1', 'PX', ARGV[7])
redis.call('ZADD', KEYS[5], ARGV[6], ARGV[8])
redis.call('ZADD', string.match(KEYS[5], '^({oo:%d+})') .. ':tf:' .. string.len(ARGV[1]) .. '.' .. ARGV[1], ARGV[6], ARGV[2])
if from ~= '' then
  local t = redis.call('TIME')
  -- Built by hand: cjson would round a sequence above 2^47 when it encodes numbers.
  local data = '{"device_id":' .. cjson.encode(ARGV[2]) .. ',"boot_id":' .. cjson.encode(boot) ..
    ',"sequence":' .. ARGV[4] .. ',"from":' .. cjson.encode(from) .. ',"to":' .. cjson.encode(state) ..
    ',"observed_at":' .. cjson.encode(ARGV[9]) .. '}'
  redis.call('XADD', KEYS[4], '*', 'tenant', ARGV[1], 'kind', 'event', 'action', 'notify', 'key', ARGV[2],
    'severity', 'INFO', 'summary', ARGV[2] .. ': ' .. from .. ' → ' .. state, 'data', data,
    'at', string.format('%.0f', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)), 'route', ARGV[10])
  return {'applied', '', gapFrom, gapTo, from, state}
end
return {'applied', '', gapFrom, gapTo, '', ''}
