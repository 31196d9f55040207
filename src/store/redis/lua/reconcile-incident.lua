-- reconcile-incident: replay one incident decided provisionally while the store
-- was unreachable (fail-open). Idempotent: a replay that crashed half-way and
-- runs again finds its marker and changes nothing.
--
-- KEYS[1]  the incident record
-- KEYS[2]  the marker of this journal entry (same hash slot as KEYS[1])
-- KEYS[3]  the shard's live index
-- KEYS[4]  what the incident shows (a hash)
-- ARGV[1]  fingerprint the journal holds
-- ARGV[2]  TTL in ms
-- ARGV[3]  grace in ms
-- ARGV[4]  refires the journal counted during the outage
-- ARGV[5]  updates the journal counted during the outage
-- ARGV[6]  marker lifetime in ms
-- ARGV[7]  the key's member in the live index
-- ARGV[8]  the route the journal kept for the key, or "" (every adapter)
-- ARGV[9]  the identity the journal kept (JSON), or ""   ARGV[10] its latest summary and labels (JSON), or ""
--
-- Returns "done" (already reconciled), "claimed" (no one else created it: the
-- provisional CREATE stands), or "merged" (another replica created it meanwhile:
-- the provisional one was a duplicate; its counts are folded into the record).
if redis.call('EXISTS', KEYS[2]) == 1 then return 'done' end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local fp, ttl, grace = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local jr, ju = tonumber(ARGV[4]), tonumber(ARGV[5])
local outcome = 'claimed'
local created, refires, updates, route = now, jr, ju, ARGV[8]

local v = redis.call('GET', KEYS[1])
if v then
  local c, d, l, r, u, oldFp, liveRoute = read_incident(v)
  if c + d + l > now then
    outcome = 'merged'
    created = c
    -- A key another replica created meanwhile keeps that create's route.
    route = liveRoute
    -- The provisional CREATE counts as one more arrival of the live incident.
    refires = r + jr + 1
    updates = u + ju
    -- The journal's arrivals are the latest this replica saw: its fingerprint
    -- wins, and a difference is one more UPDATE.
    if oldFp ~= fp then updates = updates + 1 end
  end
end
redis.call('SET', KEYS[1], incident_value(created, now - created, ttl, refires, updates, fp, route), 'PX', ttl + grace)
-- A live key keeps its identity; the journal's arrivals are the latest this replica saw (reconciledRecord).
keep_shown(KEYS[4], outcome == 'claimed', ARGV[9], ARGV[10], ttl + grace)
redis.call('ZADD', KEYS[3], now + ttl, ARGV[7])
oo_list_touch(KEYS[1], now)
redis.call('SET', KEYS[2], outcome, 'PX', tonumber(ARGV[6]))
return outcome
