-- The per-tenant listing indexes of incident records, so that GET
-- /v1/incidents reads one tenant's keys and never SCANs the keyspace. In the
-- record's own shard (one slot with it):
--   {oo:S}:ti:<len>.<tenant>  each live key by its last arrival (listing order)
--   {oo:S}:tx:<len>.<tenant>  the same keys by expiry (what expired is trimmed exactly)
--   {oo:S}:tl                 the tenants that have such indexes in the shard (the sweep's list)
-- Derived from the record key itself ({oo:S}:i:<tenant>:<key>; a tenant id
-- holds no ':'), so every script that writes or deletes a record keeps them
-- without new arguments.
local function oo_listed_in(record)
  local tag, tenant, key = string.match(record, '^({oo:%d+}):i:([^:]+):(.*)$')
  if not tag then return nil end
  local id = string.len(tenant) .. '.' .. tenant
  return tag .. ':ti:' .. id, tag .. ':tx:' .. id, key, tag, id
end

-- Drops what expired by `now` from one tenant's pair of indexes, at most `max` keys.
local function oo_list_trim(seen, exp, now, max)
  local gone = redis.call('ZRANGEBYSCORE', exp, '-inf', now, 'LIMIT', 0, max)
  if #gone > 0 then
    redis.call('ZREM', seen, unpack(gone))
    redis.call('ZREM', exp, unpack(gone))
  end
  return #gone
end

-- A record written: listed by its last arrival and its expiry; a few expired keys trimmed.
local function oo_list_touch(record, seen_at, expires, now)
  local seen, exp, key, tag, id = oo_listed_in(record)
  if not seen then return end
  redis.call('ZADD', seen, seen_at, key)
  redis.call('ZADD', exp, expires, key)
  redis.call('SADD', tag .. ':tl', id)
  oo_list_trim(seen, exp, now, 16)
end

-- A record deleted (closed).
local function oo_list_drop(record)
  local seen, exp, key = oo_listed_in(record)
  if not seen then return end
  redis.call('ZREM', seen, key)
  redis.call('ZREM', exp, key)
end
