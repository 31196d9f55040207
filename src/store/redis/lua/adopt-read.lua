-- adopt-read: freezes one shard of the old layout and reads keys to adopt
-- from it, in one step. After the freeze no caller on the old count writes in
-- this shard again (lib/layout.lua answers it OOMOVED), so what is read here
-- is the key's last state in the old layout, for good.
--
-- KEYS[1..]  keys of the old layout, all in one shard
-- ARGV[1]    the old count   ARGV[2] the count the keys move to
-- ARGV[3..]  per key: "n" when it is a delivery counter, else "d"
--
-- Returns per key: type ("string", "hash", "set", "list", "counter" or
-- "none"), the value (a hash, set or list as JSON), pttl (ms, -1 when it has
-- none).
local tag = string.match(KEYS[1], '^{oo:%d+}')
local held = redis.call('SET', tag .. ':mv:' .. ARGV[1], ARGV[2], 'NX', 'GET')
if held and held ~= ARGV[2] then
  return redis.error_reply('ERR shard ' .. tag .. ' of ' .. ARGV[1] .. ' moved to ' .. held .. ', not ' .. ARGV[2])
end
local out = {}
for i, key in ipairs(KEYS) do
  local kind = redis.call('TYPE', key).ok
  local v = ''
  if kind == 'string' then
    v = redis.call('GET', key)
    if ARGV[i + 2] == 'n' then kind = 'counter' end
  elseif kind == 'hash' then
    v = cjson.encode(redis.call('HGETALL', key))
  elseif kind == 'set' then
    v = cjson.encode(redis.call('SMEMBERS', key))
  elseif kind == 'list' then
    v = cjson.encode(redis.call('LRANGE', key, 0, -1))
  elseif kind ~= 'none' then
    return redis.error_reply('ERR cannot adopt ' .. key .. ': a ' .. kind)
  end
  out[#out + 1] = kind
  out[#out + 1] = v
  out[#out + 1] = kind == 'none' and -1 or redis.call('PTTL', key)
end
return out
