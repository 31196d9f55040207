-- Writes a group's next state and its outbox entry, only while the group's
-- version is still the one the caller read (0: no group); one step.
-- KEYS[1] the group (JSON, with "version")   KEYS[2] its shard's outbox stream
-- ARGV[1] expected version   ARGV[2] next state (JSON without version), or '' to delete
-- ARGV[3] the entry's action, or '' for none; ARGV[4..9] tenant, kind, key, severity, summary, data; ARGV[10] at;
-- ARGV[11] the entry's route (the group's: adapter names joined by commas), or '' (every adapter)
local cur = redis.call('GET', KEYS[1])
local version = 0
if cur then version = cjson.decode(cur).version end
if version ~= tonumber(ARGV[1]) then return 0 end
if ARGV[2] == '' then
  redis.call('DEL', KEYS[1])
else
  -- Spliced as text: the state's numbers stay as the caller wrote them.
  redis.call('SET', KEYS[1], string.sub(ARGV[2], 1, -2) .. ',"version":' .. (version + 1) .. '}')
end
if ARGV[3] ~= '' then
  redis.call('XADD', KEYS[2], '*', 'tenant', ARGV[4], 'kind', ARGV[5], 'action', ARGV[3], 'key', ARGV[6],
    'severity', ARGV[7], 'summary', ARGV[8], 'data', ARGV[9], 'at', ARGV[10], 'route', ARGV[11])
end
return 1
