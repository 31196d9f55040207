-- The per-tenant listing index of incident records, so that GET /v1/incidents
-- reads one tenant's keys and never SCANs the keyspace. In the record's own
-- shard (one slot with it):
--   {oo:S}:ti:<len>.<tenant>  each key by its last arrival (listing order)
--   {oo:S}:tl                 the tenants that have such an index in the shard (the sweep's list)
-- Derived from the record key itself ({oo:S}:i:<tenant>:<key>; a tenant id
-- holds no ':'), so every script that writes or deletes a record keeps them
-- without new arguments. A key leaves the index when it is closed; one whose
-- record expired leaves when a listing or the sweep finds its record gone
-- (one sorted set, not two: a second one by expiry would cost every
-- decision another ZADD, about 6 µs of Redis on a large shard).
local function oo_listed_in(record)
  local tag, tenant, key = string.match(record, '^({oo:%d+}):i:([^:]+):(.*)$')
  if not tag then return nil end
  local id = string.len(tenant) .. '.' .. tenant
  return tag .. ':ti:' .. id, key, tag, id, tenant
end

-- A record written: listed by its last arrival.
local function oo_list_touch(record, seen_at)
  local index, key, tag, id = oo_listed_in(record)
  if not index then return end
  redis.call('ZADD', index, seen_at, key)
  redis.call('SADD', tag .. ':tl', id)
end

-- A record deleted (closed).
local function oo_list_drop(record)
  local index, key = oo_listed_in(record)
  if index then redis.call('ZREM', index, key) end
end

-- The keys of `members` (of the index of the tenant whose records start with
-- `prefix`) whose record is gone: removed from the index; answers the rest.
local function oo_list_keep(index, prefix, members)
  local kept, gone = {}, {}
  for _, key in ipairs(members) do
    if redis.call('EXISTS', prefix .. key) == 1 then kept[#kept + 1] = key else gone[#gone + 1] = key end
  end
  if #gone > 0 then redis.call('ZREM', index, unpack(gone)) end
  return kept
end
