-- silence-write: creates, updates or expires one silence, and bumps the
-- silence version the replicas watch, in one step. A silence is a string
-- that Redis itself deletes SILENCE_RETENTION after it ends; the two sorted
-- sets (the tenant's, everyone's) index them by end time.
--
-- KEYS[1] the silence   KEYS[2] the tenant's index   KEYS[3] everyone's index   KEYS[4] the version
-- KEYS[5] the silences by the version their last write made (what a replica reloads since its version)
-- ARGV[1] create | update | expire   ARGV[2] now (ms)   ARGV[3] retention (ms)
-- ARGV[4] the silence as JSON (create, update)   ARGV[5] its end (ms)   ARGV[6] open silences allowed (create)
-- ARGV[7] ended silences the tenant keeps (create: the oldest-ended beyond it are deleted)
-- ARGV[8] ended silences one create deletes at most (a lowered bound is reached over a few creates)
--
-- Returns create: 1 stored, 0 refused (too many open); update: updated | absent | expired;
-- expire: 1 when the silence exists (ended now, or already), 0 when not.
local mode, now, keep = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
-- Index entries of silences Redis has already deleted go first.
for _, k in ipairs(redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now - keep)) do redis.call('ZREM', KEYS[5], k) end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - keep)
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now - keep)
local function store(body, ends)
  redis.call('SET', KEYS[1], body, 'PXAT', ends + keep)
  redis.call('ZADD', KEYS[2], ends, KEYS[1])
  redis.call('ZADD', KEYS[3], ends, KEYS[1])
  redis.call('ZADD', KEYS[5], redis.call('INCR', KEYS[4]), KEYS[1])
end
local old = redis.call('GET', KEYS[1])
if mode == 'create' then
  if old or redis.call('ZCOUNT', KEYS[2], '(' .. now, '+inf') >= tonumber(ARGV[6]) then return 0 end
  store(ARGV[4], tonumber(ARGV[5]))
  -- The index is ordered by end: the tenant's oldest-ended come first. All keys share the {oo:sil} slot.
  local excess = math.min(redis.call('ZCOUNT', KEYS[2], '-inf', now) - tonumber(ARGV[7]), tonumber(ARGV[8]))
  if excess > 0 then
    for _, k in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, excess)) do
      redis.call('DEL', k)
      redis.call('ZREM', KEYS[2], k)
      redis.call('ZREM', KEYS[3], k)
      redis.call('ZREM', KEYS[5], k)
    end
  end
  return 1
end
if not old then return mode == 'update' and 'absent' or 0 end
local s = cjson.decode(old)
if mode == 'update' then
  if s.endsAt <= now then return 'expired' end
  store(ARGV[4], tonumber(ARGV[5]))
  return 'updated'
end
if s.endsAt > now then
  if s.startsAt > now then s.startsAt = now end
  s.endsAt = now
  s.updatedAt = now
  store(cjson.encode(s), now)
end
return 1
