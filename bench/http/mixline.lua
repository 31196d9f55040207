-- The bench's incident mix, one JSON line at a time, shared by mix.lua and
-- batch.lua: 50% new keys, 40% unchanged re-fires, 10% severity changes of
-- earlier keys. Keys are `<prefix>-<n>`, so each run's keys are new.
return function(prefix)
  local counter, made = 0, 0
  return function()
    counter = counter + 1
    local r = (counter * 2654435761) % 100
    local key, severity
    if made == 0 or r < 50 then
      made = made + 1
      key, severity = made, "MAJOR"
    else
      key = (counter * 7919) % made + 1
      severity = r < 90 and "MAJOR" or "CRITICAL"
    end
    return '{"element_id":"' .. prefix .. '-' .. key .. '","fault_class":"LINK_DOWN","root_cause_id":"rc-4411","severity":"' .. severity .. '","summary":"link down"}'
  end
end
