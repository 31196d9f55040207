-- wrk script: POST /v1/incidents with the suite's mix, per connection thread:
-- 50% new keys, 40% unchanged re-fires, 10% severity changes of earlier keys.
-- Argument: a prefix, so each run's keys are new to the store.
--   wrk -t1 -c64 -d10s -s bench/http/mix.lua URL -- PREFIX
local counter, made, prefix = 0, 0, "run"

function init(args)
  if args[1] then prefix = args[1] end
end

request = function()
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
  local body = '{"element_id":"' .. prefix .. '-' .. key .. '","fault_class":"LINK_DOWN","root_cause_id":"rc-4411","severity":"' .. severity .. '","summary":"link down"}'
  return wrk.format("POST", "/v1/incidents", { ["Content-Type"] = "application/json" }, body)
end
