-- An incident record: "createdAt,lastSeenDelta,ttl,refires,updates,fingerprint"
-- (ms), and, when the key has a route, a newline and the route: the
-- adapters its create went to, joined by commas. A fingerprint
-- ("SEVERITY|cleared") holds no newline; a record without a route is the
-- same string as before routes were kept.
local function read_incident(v)
  local c, d, l, r, u, rest = string.match(v, '^(%d+),(%d+),(%d+),(%d+),(%d+),(.*)$')
  local fp, route = string.match(rest, '^([^\n]*)\n(.*)$')
  if not fp then fp, route = rest, '' end
  return tonumber(c), tonumber(d), tonumber(l), tonumber(r), tonumber(u), fp, route
end

local function incident_value(created, delta, ttl, refires, updates, fp, route)
  local v = string.format('%.0f,%.0f,%.0f,%.0f,%.0f,%s', created, delta, ttl, refires, updates, fp)
  if route ~= '' then v = v .. '\n' .. route end
  return v
end

-- What an incident shows (a hash beside its record): a create (`fresh`)
-- starts it over with the identity it received; every arrival that shows
-- something sets the latest summary and labels; it lives as the record does.
-- identity and latest are JSON, or "" for none. `by`, when given, is who
-- wrote the arrival (a claim's writer: a fail-open journal's id, or "" for
-- nobody's): a replay tells its own replica's late call from another's.
local function keep_shown(key, fresh, identity, latest, lifetime, by)
  if fresh then
    redis.call('DEL', key)
    if identity ~= '' then redis.call('HSET', key, 'identity', identity) end
  end
  if latest ~= '' then redis.call('HSET', key, 'latest', latest) end
  if by == '' then
    redis.call('HDEL', key, 'by')
  elseif by then
    redis.call('HSET', key, 'by', by)
  end
  redis.call('PEXPIRE', key, lifetime)
end
