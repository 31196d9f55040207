-- decide-incident: claim-or-compare one incident key in ONE atomic step.
--
-- KEYS[1]  the incident record
-- KEYS[2]  the shard's outbox (a stream, same slot)
-- KEYS[3]  the key's failing deliveries (a set, same slot)
-- KEYS[4]  the shard's due queue
-- KEYS[5]  the key's resolution marker (an alert episode's recorded end, ms)
-- ARGV[1]  fingerprint
-- ARGV[2]  TTL in ms: the incident is live until last arrival + TTL (sliding)
-- ARGV[3]  grace in ms: an expired, unclosed record is kept this much longer,
--          so the next arrival can be reported as a premature expiry
-- ARGV[4]  "1" to write an outbox entry on CREATE and UPDATE, "" for none
-- ARGV[5]  tenant   ARGV[6] key   ARGV[7] severity   ARGV[8] summary   ARGV[9] data (JSON)
-- ARGV[10] the shard's hash tag
-- ARGV[11] the claim's episode start (ms), or "" when the claim has no episodes
--
-- Returns {outcome, now, createdAt, refires, updates, previousFingerprint, previousUpdates}
--   outcome: "created" | "expired" (created; the previous incident expired unclosed)
--            | "unchanged" | "changed"
--            | "stale" (the episode was already resolved: nothing changed)
-- A re-fire of a live key also re-queues the key's failing deliveries (seed
-- 003: a partial failure stays eligible), in this same step.
--
-- The record is one string, "createdAt,lastSeenDelta,ttl,refires,updates,fingerprint"
-- (ms; the fingerprint last, so it may hold commas). Time is the server's clock.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local fp, ttl, grace = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])

if ARGV[11] ~= '' then
  local ended = redis.call('GET', KEYS[5])
  if ended and tonumber(ended) >= tonumber(ARGV[11]) then return {'stale', now, 0, 0, 0, '', 0} end
end

local function outbox(action)
  if ARGV[4] ~= '1' then return end
  redis.call('XADD', KEYS[2], '*', 'tenant', ARGV[5], 'kind', 'incident', 'action', action, 'key', ARGV[6],
    'severity', ARGV[7], 'summary', ARGV[8], 'data', ARGV[9], 'at', string.format('%.0f', now))
end

local function save(created, refires, updates)
  redis.call('SET', KEYS[1],
    string.format('%.0f,%.0f,%.0f,%.0f,%.0f,%s', created, now - created, ttl, refires, updates, fp),
    'PX', ttl + grace)
end

local v = redis.call('GET', KEYS[1])
if v then
  local c, d, l, r, u, oldFp = string.match(v, '^(%d+),(%d+),(%d+),(%d+),(%d+),(.*)$')
  local created, refires, updates = tonumber(c), tonumber(r), tonumber(u)
  if created + tonumber(d) + tonumber(l) > now then
    requeue_failing(KEYS[3], KEYS[4], ARGV[10], now)
    if oldFp ~= fp then
      save(created, refires + 1, updates + 1)
      outbox('update')
      return {'changed', now, created, refires + 1, updates + 1, oldFp, updates}
    end
    save(created, refires + 1, updates)
    return {'unchanged', now, created, refires + 1, updates, oldFp, updates}
  end
  save(now, 0, 0)
  outbox('create')
  return {'expired', now, now, 0, 0, oldFp, updates}
end
save(now, 0, 0)
outbox('create')
return {'created', now, now, 0, 0, '', 0}
