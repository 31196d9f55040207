-- decide_incident: the claim-or-compare of one incident key, shared by
-- decide-incident.lua (one key) and decide-incidents.lua (several keys of
-- one call). The arguments are those of decide-incident.lua, in its order:
--   k: {record, outbox, failing deliveries, due queue, resolution marker,
--       the shard's live index}
--   a: {fingerprint, ttl ms, grace ms, outbox flag, tenant, key, severity,
--       summary, data, shard tag, episode start or "", live-index member}
-- `now` is the server's clock in ms, read once by the caller.
local function decide_incident(k, a, now)
  local fp, ttl, grace = a[1], tonumber(a[2]), tonumber(a[3])

  if a[11] ~= '' then
    local ended = redis.call('GET', k[5])
    if ended and tonumber(ended) >= tonumber(a[11]) then return {'stale', now, 0, 0, 0, '', 0} end
  end

  local function outbox(action)
    if a[4] ~= '1' then return end
    redis.call('XADD', k[2], '*', 'tenant', a[5], 'kind', 'incident', 'action', action, 'key', a[6],
      'severity', a[7], 'summary', a[8], 'data', a[9], 'at', string.format('%.0f', now))
  end

  local function save(created, refires, updates)
    redis.call('SET', k[1],
      string.format('%.0f,%.0f,%.0f,%.0f,%.0f,%s', created, now - created, ttl, refires, updates, fp),
      'PX', ttl + grace)
    -- The live index holds each live key with its expiry, so the live count is
    -- exact; what expired is trimmed here, as the shard's keys are decided.
    redis.call('ZADD', k[6], now + ttl, a[12])
    redis.call('ZREMRANGEBYSCORE', k[6], '-inf', now)
    oo_list_touch(k[1], now)
  end

  local v = redis.call('GET', k[1])
  if v then
    local c, d, l, r, u, oldFp = string.match(v, '^(%d+),(%d+),(%d+),(%d+),(%d+),(.*)$')
    local created, refires, updates = tonumber(c), tonumber(r), tonumber(u)
    if created + tonumber(d) + tonumber(l) > now then
      requeue_failing(k[3], k[4], a[10], now)
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
end
