-- decide-incidents: several incident claims in ONE call, each decided exactly
-- as decide-incident.lua decides it (decide_incident, lib/incident.lua), in
-- the order given, at one server time. The call is atomic as a whole, so a
-- key claimed twice in it is decided twice in order, as two calls in a row
-- would be. On a cluster every key of a call is in one slot (one shard).
--
-- KEYS  five per claim, as decide-incident.lua takes them
-- ARGV  eleven per claim, as decide-incident.lua takes them
-- Returns one decide-incident reply per claim, in order. A claim that raises
-- an error (its data, a key of the wrong type) answers {"error", message}
-- and the claims after it still run, as separate calls would: like a
-- separate call, what it wrote before the error stays.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local out = {}
for i = 0, #KEYS / 5 - 1 do
  local ok, reply = pcall(decide_incident,
    {KEYS[i * 5 + 1], KEYS[i * 5 + 2], KEYS[i * 5 + 3], KEYS[i * 5 + 4], KEYS[i * 5 + 5]},
    {ARGV[i * 11 + 1], ARGV[i * 11 + 2], ARGV[i * 11 + 3], ARGV[i * 11 + 4], ARGV[i * 11 + 5], ARGV[i * 11 + 6],
     ARGV[i * 11 + 7], ARGV[i * 11 + 8], ARGV[i * 11 + 9], ARGV[i * 11 + 10], ARGV[i * 11 + 11]},
    now)
  if ok then
    out[i + 1] = reply
  else
    out[i + 1] = {'error', type(reply) == 'table' and reply.err or tostring(reply)}
  end
end
return out
