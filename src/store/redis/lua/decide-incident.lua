-- decide-incident: claim-or-compare one incident key in ONE atomic step.
--
-- KEYS[1]  the incident record
-- ARGV[1]  fingerprint
-- ARGV[2]  TTL in ms: the incident is live until last arrival + TTL (sliding)
-- ARGV[3]  grace in ms: an expired, unclosed record is kept this much longer,
--          so the next arrival can be reported as a premature expiry
--
-- Returns {outcome, now, createdAt, refires, updates, previousFingerprint, previousUpdates}
--   outcome: "created" | "expired" (created; the previous incident expired unclosed)
--            | "unchanged" | "changed"
--
-- The record is one string, "createdAt,lastSeenDelta,ttl,refires,updates,fingerprint"
-- (ms; the fingerprint last, so it may hold commas). Time is the server's clock.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local fp, ttl, grace = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])

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
    if oldFp ~= fp then
      save(created, refires + 1, updates + 1)
      return {'changed', now, created, refires + 1, updates + 1, oldFp, updates}
    end
    save(created, refires + 1, updates)
    return {'unchanged', now, created, refires + 1, updates, oldFp, updates}
  end
  save(now, 0, 0)
  return {'expired', now, now, 0, 0, oldFp, updates}
end
save(now, 0, 0)
return {'created', now, now, 0, 0, '', 0}
