-- adopt-write: adopts keys read from the old layout (adopt-read.lua) into the
-- new one, once. A key that exists in the new layout already, or was adopted
-- before (its marker), is left as it is: the old copy is stale the moment the
-- new layout has the key, even after the new one closed and is gone. A
-- counter (the n of a delivery's Idempotency-Key) is taken a million past its
-- old value, so that deliveries still fanned out in the old shard and those
-- in the new one never share an Idempotency-Key.
--
-- KEYS[1]    the new shard's index of such records (a zset)   KEYS[2..] the keys to adopt into, all in one shard
-- ARGV[1]    the record's member in that index, or ""
-- ARGV[2]    how long a marker outlives the old copy it stands for (ms)
-- ARGV[3]    the index: "lv" (live incidents: KEYS[2] is an incident record, scored by its expiry),
--            "f" (device freshness: KEYS[2] is a device hash, scored by its obs), "" none
-- ARGV[4..]  per key of KEYS[2..], as adopt-read.lua answered: type ("none" when the old layout
--            had none), value, pttl (ms, -1 for none)
--
-- Returns how many keys were restored.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local grace = tonumber(ARGV[2])
local restored = 0
for i = 2, #KEYS do
  local key, j = KEYS[i], 3 * (i - 2) + 4
  local kind, value, pttl = ARGV[j], ARGV[j + 1], tonumber(ARGV[j + 2])
  if kind == 'counter' then
    local moved = tonumber(value) + 1000000
    if moved > tonumber(redis.call('GET', key) or '0') then
      redis.call('SET', key, moved)
      if pttl > 0 then redis.call('PEXPIRE', key, pttl) end
    end
  elseif kind ~= 'none' then
    local marker = string.gsub(key, '^({oo:%d+}):', '%1:ad:', 1)
    if redis.call('EXISTS', key) == 0 and redis.call('EXISTS', marker) == 0 then
      if kind == 'string' then
        redis.call('SET', key, value)
      elseif kind == 'hash' then
        redis.call('HSET', key, unpack(cjson.decode(value)))
      elseif kind == 'list' then
        redis.call('RPUSH', key, unpack(cjson.decode(value)))
      else
        redis.call('SADD', key, unpack(cjson.decode(value)))
      end
      if pttl > 0 then redis.call('PEXPIRE', key, pttl) end
      restored = restored + 1
      if i == 2 and ARGV[3] == 'lv' then
        local c, d, l = string.match(redis.call('GET', key), '^(%d+),(%d+),(%d+),')
        local expires = tonumber(c) + tonumber(d) + tonumber(l)
        if expires > now then
          redis.call('ZADD', KEYS[1], expires, ARGV[1])
          oo_list_touch(key, tonumber(c) + tonumber(d))
        end
      elseif i == 2 and ARGV[3] == 'f' then
        local obs = redis.call('HGET', key, 'obs')
        if obs then
          redis.call('ZADD', KEYS[1], obs, ARGV[1])
          -- The tenant's device index too: the member is <len>.<tenant><len>.<device>, and a tenant id is ASCII.
          local n, rest = string.match(ARGV[1], '^(%d+)%.(.*)$')
          local device = string.match(string.sub(rest, tonumber(n) + 1), '^%d+%.(.*)$')
          redis.call('ZADD', string.match(KEYS[1], '^({oo:%d+})') .. ':tf:' .. n .. '.' .. string.sub(rest, 1, tonumber(n)), obs, device)
        end
      end
    end
    -- The marker stands for the old copy as long as that copy could be read.
    if pttl > 0 then
      local left = redis.call('PTTL', marker)
      if left ~= -1 and left < pttl + grace then redis.call('SET', marker, '1', 'PX', pttl + grace) end
    else
      -- An old copy with no lifetime is removed by migrate-shards long before this.
      redis.call('SET', marker, '1', 'PX', 7 * 86400000)
    end
  end
end
-- The first key's marker also says the whole set was looked at: the next
-- caller skips the old layout (frozen, it has nothing newer to give).
local first = string.gsub(KEYS[2], '^({oo:%d+}):', '%1:ad:', 1)
redis.call('SET', first, '1', 'PX', grace, 'NX')
return restored
