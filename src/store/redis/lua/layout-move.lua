-- layout-move: starts a shard move, or resumes the one running,
-- in one step on the layout's slot.
--
-- KEYS[1]  the recorded shard count   KEYS[2] while a shard move runs, the count it moves from
-- ARGV[1]  the count to move to
--
-- Returns {from, state}: state "started", "resumed", or "recorded" (nothing
-- was recorded yet: no replica has written keys, so nothing moves). Refuses
-- with an error whose first word is its code, as Redis's own errors do:
-- OOMIGRATING (another move is running) or OOSHRINK (fewer shards).
local to = tonumber(ARGV[1])
local cur, from = redis.call('GET', KEYS[1]), redis.call('GET', KEYS[2])
if from then
  if tonumber(cur) == to then return {from, 'resumed'} end
  return redis.error_reply('OOMIGRATING a shard move from ' .. from .. ' to ' .. tostring(cur) .. ' shards is running; run it to the end first')
end
if not cur then
  redis.call('SET', KEYS[1], ARGV[1])
  return {ARGV[1], 'recorded'}
end
if tonumber(cur) == to then return {cur, 'same'} end
if to < tonumber(cur) then
  return redis.error_reply('OOSHRINK the keys are laid out in ' .. cur .. ' shards; a shard move only adds shards (to go down, start a new Redis: docs/scaling.md)')
end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('SET', KEYS[2], cur)
return {cur, 'started'}
