-- decide_incident: the claim-or-compare of one incident key, shared by
-- decide-incident.lua (one key) and decide-incidents.lua (several keys of
-- one call). The arguments are those of decide-incident.lua, in its order:
--   k: {record, outbox, failing deliveries, due queue, resolution marker,
--       the shard's live index, what the incident shows (a hash)}
--   a: {fingerprint, ttl ms, grace ms, outbox flag, tenant, key, severity,
--       summary, data, route or "", shard tag, episode start or "",
--       live-index member, identity JSON or "", latest JSON or "",
--       the claim's writer or "", the episode it amends (ms) or "" and
--       that episode's refires as the edit read them, "1" when what the
--       claim shows replaces the latest only on a create or an update}
-- A claim that amends an episode is decided on that live episode only, as
-- read (its refires unmoved), as a change even at the same fingerprint;
-- another, none live, or an arrival since, is stale.
-- A create keeps the route it is given with the key (lib/record.lua); every
-- later change, and its outbox entry, keeps the create's. What the incident
-- shows is a hash beside the record: a create's identity, every arrival's
-- latest summary and labels, with the record's lifetime.
-- `now` is the server's clock in ms, read once by the caller.
local function decide_incident(k, a, now)
  local fp, ttl, grace = a[1], tonumber(a[2]), tonumber(a[3])

  if a[12] ~= '' then
    local ended = redis.call('GET', k[5])
    if ended and tonumber(ended) >= tonumber(a[12]) then return {'stale', now, 0, 0, 0, '', 0, '', '', ''} end
  end

  local function outbox(action, route)
    if a[4] ~= '1' then return end
    redis.call('XADD', k[2], '*', 'tenant', a[5], 'kind', 'incident', 'action', action, 'key', a[6],
      'severity', a[7], 'summary', a[8], 'data', a[9], 'at', string.format('%.0f', now), 'route', route)
  end

  local function save(created, refires, updates, route, fresh, repeat_)
    redis.call('SET', k[1], incident_value(created, now - created, ttl, refires, updates, fp, route), 'PX', ttl + grace)
    local latest = a[15]
    if repeat_ and a[19] == '1' then latest = '' end
    keep_shown(k[7], fresh, a[14], latest, ttl + grace, a[16])
    -- The live index holds each live key with its expiry, so the live count is
    -- exact; what expired is trimmed here, as the shard's keys are decided.
    redis.call('ZADD', k[6], now + ttl, a[13])
    redis.call('ZREMRANGEBYSCORE', k[6], '-inf', now)
    oo_list_touch(k[1], now)
  end

  local function shown()
    local s = redis.call('HMGET', k[7], 'identity', 'latest')
    return s[1] or '', s[2] or ''
  end

  local v = redis.call('GET', k[1])
  if a[17] ~= '' then
    local live = false
    if v then
      local created, d, l, refires = read_incident(v)
      live = created + d + l > now and created == tonumber(a[17]) and refires == tonumber(a[18])
    end
    if not live then return {'stale', now, 0, 0, 0, '', 0, '', '', ''} end
  end
  if v then
    local created, d, l, refires, updates, oldFp, route = read_incident(v)
    if created + d + l > now then
      requeue_failing(k[3], k[4], a[11], now)
      if oldFp ~= fp or a[17] ~= '' then
        save(created, refires + 1, updates + 1, route)
        outbox('update', route)
        return {'changed', now, created, refires + 1, updates + 1, oldFp, updates, route, shown()}
      end
      save(created, refires + 1, updates, route, false, true)
      return {'unchanged', now, created, refires + 1, updates, oldFp, updates, route, shown()}
    end
    save(now, 0, 0, a[10], true)
    outbox('create', a[10])
    return {'expired', now, now, 0, 0, oldFp, updates, a[10], a[14], a[15]}
  end
  save(now, 0, 0, a[10], true)
  outbox('create', a[10])
  return {'created', now, now, 0, 0, '', 0, a[10], a[14], a[15]}
end
