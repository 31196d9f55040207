-- wrk script for the soak: a steady mix over a keyspace that turns over, so
-- the live set, the seen-markers and the windows reach a steady size and
-- everything created also expires while the soak runs.
--   wrk -t1 -cC -dDs -s bench/soak/soak.lua URL -- PAUSE_MS KEYS ROTATE_S
-- PAUSE_MS: each connection waits this long before its next request (the
-- soak driver sets it from the rate it measured, to hold half the peak).
-- KEYS: incidents per generation; a new generation of element ids starts
-- every ROTATE_S seconds, and the old one expires after the server's TTL.
-- Mix: 80% incidents (of which 10% change severity), 10% device events
-- (of which 10% a producer's retry), 10% SPC violations.
local pause, keys, rotate = 0, 20000, 60
local devices, seq = 2000, {}
local counter = 0

function init(args)
  pause = tonumber(args[1] or "0")
  keys = tonumber(args[2] or "20000")
  rotate = tonumber(args[3] or "60")
  math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16) % 100000)
end

function delay()
  return pause
end

local json = { ["Content-Type"] = "application/json" }

request = function()
  counter = counter + 1
  local r = math.random(100)
  local now = os.time()
  if r <= 80 then
    local gen = math.floor(now / rotate)
    local key = math.random(keys)
    local severity = math.random(10) == 1 and "CRITICAL" or "MAJOR"
    return wrk.format("POST", "/v1/incidents", json,
      '{"element_id":"soak-' .. gen .. '-' .. key .. '","fault_class":"LINK_DOWN","root_cause_id":"rc-soak","severity":"' ..
      severity .. '","summary":"soak"}')
  elseif r <= 90 then
    local d = math.random(devices)
    local s = seq[d] or 0
    if math.random(10) > 1 then s = s + 1 end
    seq[d] = s
    return wrk.format("POST", "/v1/events", json,
      '{"tenant_id":"default","device_id":"dev-' .. d .. '","boot_id":"b1","sequence":' .. s .. ',"state":"' ..
      (s % 7 == 0 and "DOWN" or "UP") .. '","observed_at":"' .. os.date("!%Y-%m-%dT%H:%M:%SZ", now) .. '"}')
  else
    local p = math.random(500)
    return wrk.format("POST", "/v1/violations", json,
      '{"process_id":"line-' .. p .. '","rule_id":"nelson_' .. math.random(3) .. '","timestamp":' .. now ..
      ',"value":12.5,"center":10,"ucl":12,"lcl":8}')
  end
end
