-- reconcile-incident: replay one incident decided provisionally while the store
-- was unreachable (fail-open). Idempotent: a replay that crashed half-way and
-- runs again finds its marker and changes nothing.
--
-- KEYS[1]  the incident record
-- KEYS[2]  the marker of this journal entry (same hash slot as KEYS[1])
-- KEYS[3]  the shard's live index
-- KEYS[4]  what the incident shows (a hash)
-- KEYS[5]  the shard's outbox (a stream, same slot)
-- ARGV[1]  fingerprint the journal holds
-- ARGV[2]  TTL in ms
-- ARGV[3]  grace in ms
-- ARGV[4]  refires the journal counted during the outage
-- ARGV[5]  updates the journal counted during the outage
-- ARGV[6]  marker lifetime in ms
-- ARGV[7]  the key's member in the live index
-- ARGV[8]  the route the journal kept for the key, or "" (every adapter)
-- ARGV[9]  the identity the journal kept (JSON), or ""   ARGV[10] its latest summary and labels (JSON), or ""
-- ARGV[11] "1" when the journal's latest arrival has an outbox entry to give, then
-- ARGV[12] tenant   ARGV[13] key   ARGV[14] severity   ARGV[15] summary   ARGV[16] data (JSON)
-- ARGV[17] what the journal still owes the receivers for the key: "create", "update" or 
-- ARGV[18] the shard's hash tag (its delivery counters)
-- ARGV[19] how long ago (ms) the journal's latest arrival for the key was, by the replica's clock
-- ARGV[20] the journal's id, as its replica's claims name their writer (decide-incident.lua ARGV[16])
-- ARGV[21] how long ago (ms) the journal's entry for the key was created, by the replica's clock
-- KEYS[6]  when the key's last live episode was closed (close-incident.lua), if it still is kept
--
-- Returns "done" (already reconciled), "closed" (the key was closed after the
-- journal's latest arrival: that arrival belonged to the episode the close
-- ended, and changes nothing), "claimed" (no one else created it: the
-- provisional CREATE stands), or "merged" (another replica created it meanwhile:
-- the provisional one was a duplicate; its counts are folded into the record).
-- The arrival's time is the server's now less its age, so the replica's own
-- clock, however wrong, never enters; the age is measured before the call
-- travels, so the arrival reads as later than it was, never earlier: a doubt
-- opens an episode too many, never closes a live fault.
-- What the journal had not delivered for the key is handed to this store,
-- whose line carries it in order with the store's own decisions. A claim
-- writes a create when one is owed, or when the key had creates before (a
-- later episode: the journal numbered its create 1, another episode's
-- Idempotency-Key, and the key's earlier close may still be queued here, to
-- arrive after it); else an update when one is owed.
-- A merge whose fingerprint differs from the live one is an UPDATE, and like
-- every UPDATE it writes its outbox entry in this step: the receiver learns
-- the change the journal saw, or it would hold the state before the outage
-- while the store records the one after.
if redis.call('EXISTS', KEYS[2]) == 1 then return 'done' end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local fp, ttl, grace = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local jr, ju = tonumber(ARGV[4]), tonumber(ARGV[5])
local closed = redis.call('GET', KEYS[6])
if closed and tonumber(closed) > now - tonumber(ARGV[19]) then
  redis.call('SET', KEYS[2], 'closed', 'PX', tonumber(ARGV[6]))
  return 'closed'
end
local outcome = 'claimed'
-- The key's last arrival is the journal's, not this replay's: another
-- journal's replay of the key compares its own arrivals with it. A claim's
-- episode began when the journal's did.
local arrived = now - tonumber(ARGV[19])
local created, refires, updates, route = math.min(now - tonumber(ARGV[21]), arrived), jr, ju, ARGV[8]
local last = arrived

local changed = false
-- Another writer saw the key after the journal's latest arrival (another
-- replica decided it meanwhile, later): the store's state is the newer one,
-- and stays. What this journal wrote itself is never newer than its arrivals:
-- its replica's call that the store ran only after the replica had given up
-- on it (and journaled that arrival), or this replay's earlier entry of the key.
local newer = false
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
    last = math.max(c + d, arrived)
    if c + d > arrived and redis.call('HGET', KEYS[4], 'by') ~= ARGV[20] then
      newer = true
      fp = oldFp
    elseif oldFp ~= fp then
      -- The journal's arrivals are the latest: its fingerprint wins, and a
      -- difference is one more UPDATE.
      updates = updates + 1
      changed = true
    end
  end
end
-- Live until now + ttl, as the journal's entry was: the lifetime counts from the last arrival.
redis.call('SET', KEYS[1], incident_value(created, last - created, now + ttl - last, refires, updates, fp, route), 'PX', ttl + grace)
-- A live key keeps its identity; the journal's arrivals are the latest this replica saw, unless another writer's are newer.
local latest = ARGV[10]
if newer then latest = '' end
-- The key's last writer is this journal, unless another's newer state stays.
local by = ARGV[20]
if newer then by = nil end
keep_shown(KEYS[4], outcome == 'claimed', ARGV[9], latest, ttl + grace, by)
redis.call('ZADD', KEYS[3], now + ttl, ARGV[7])
oo_list_touch(KEYS[1], now)
if outcome == 'claimed' and ARGV[11] == '1' then
  local action = nil
  if ARGV[17] == 'create' or redis.call('EXISTS', ARGV[18] .. ':n:' .. lp('incident', ARGV[12], ARGV[13], 'create')) == 1 then
    action = 'create'
  elseif ARGV[17] == 'update' then
    action = 'update'
  end
  if action then
    redis.call('XADD', KEYS[5], '*', 'tenant', ARGV[12], 'kind', 'incident', 'action', action, 'key', ARGV[13],
      'severity', ARGV[14], 'summary', ARGV[15], 'data', ARGV[16], 'at', string.format('%.0f', now), 'route', route)
  end
end
-- A merge the journal owes anything for (updates it held while the store was
-- away, or a create) writes an update too, changed or not: its provisional
-- create may have reached the receiver after the store's older state, or be
-- in flight as the replay drops it, so the receiver's last word would
-- otherwise be that create.
if (changed or (outcome == 'merged' and ARGV[17] ~= '' and not newer)) and ARGV[11] == '1' then
  redis.call('XADD', KEYS[5], '*', 'tenant', ARGV[12], 'kind', 'incident', 'action', 'update', 'key', ARGV[13],
    'severity', ARGV[14], 'summary', ARGV[15], 'data', ARGV[16], 'at', string.format('%.0f', now), 'route', route)
end
-- When the store's state is the newer, the journal's create (sent during the
-- outage) may still have reached the receiver after it: the store's state is
-- sent again, its severity and summary with the journal's data for the key
-- (the store keeps no payload), so the receiver's last word is the newest.
if newer and ARGV[11] == '1' then
  local summary = ARGV[15]
  local shown = redis.call('HGET', KEYS[4], 'latest')
  if shown then
    local ok, t = pcall(cjson.decode, shown)
    if ok and type(t) == 'table' and type(t.summary) == 'string' then summary = t.summary end
  end
  redis.call('XADD', KEYS[5], '*', 'tenant', ARGV[12], 'kind', 'incident', 'action', 'update', 'key', ARGV[13],
    'severity', string.match(fp, '^[^|]*'), 'summary', summary, 'data', ARGV[16], 'at', string.format('%.0f', now), 'route', route)
end
redis.call('SET', KEYS[2], outcome, 'PX', tonumber(ARGV[6]))
return outcome
