-- decide-incidents: several incident claims in ONE call, each decided exactly
-- as decide-incident.lua decides it (decide_incident, lib/incident.lua), in
-- the order given, at one server time. The call is atomic as a whole, so a
-- key claimed twice in it is decided twice in order, as two calls in a row
-- would be. On a cluster every key of a call is in one slot (one shard).
--
-- KEYS  seven per claim, as decide-incident.lua takes them
-- ARGV  nineteen per claim, as decide-incident.lua takes them
-- Returns one decide-incident reply per claim, in order. A claim that raises
-- an error (its data, a key of the wrong type) answers {"error", message}
-- and the claims after it still run, as separate calls would: like a
-- separate call, what it wrote before the error stays.
-- Every claim's shard is guarded before any claim is decided (lib/layout.lua).
for i = 7, #KEYS, 7 do
  local refused = oo_refused(KEYS[i + 1] or '')
  if refused then return refused end
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local out = {}
for i = 0, #KEYS / 7 - 1 do
  local k, a = {}, {}
  for j = 1, 7 do k[j] = KEYS[i * 7 + j] end
  for j = 1, 19 do a[j] = ARGV[i * 19 + j] end
  local ok, reply = pcall(decide_incident, k, a, now)
  if ok then
    out[i + 1] = reply
  else
    out[i + 1] = {'error', type(reply) == 'table' and reply.err or tostring(reply)}
  end
end
return out
