-- wrk script: fills a server with live incidents. Request i creates key
-- OFFSET+i until LIMIT keys exist; after that it re-fires existing keys, so
-- the live set never grows past LIMIT however long wrk runs.
--   wrk -t1 -c64 -d30s -s bench/http/fill.lua URL -- OFFSET LIMIT
local counter, offset, limit = 0, 0, 1000000

function init(args)
  offset = tonumber(args[1] or "0")
  limit = tonumber(args[2] or "1000000")
end

request = function()
  local i = offset + counter
  counter = counter + 1
  if i >= limit then i = counter % limit end
  local body = '{"element_id":"fill-' .. i .. '","fault_class":"LINK_DOWN","root_cause_id":"rc","severity":"MAJOR"}'
  return wrk.format("POST", "/v1/incidents", { ["Content-Type"] = "application/json" }, body)
end
