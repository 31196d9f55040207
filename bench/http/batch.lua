-- wrk script: POST /v1/incidents as NDJSON batches of LINES lines of the
-- suite's mix (bench/http/mixline.lua). Arguments: a prefix (each run's keys
-- are new) and the lines per batch.
--   wrk -t1 -c64 -d10s -s bench/http/batch.lua URL -- PREFIX 1000
-- Run from the repository root (the mix is required as bench.http.mixline).
local mixline = require("bench.http.mixline")
local nextLine, lines = mixline("run"), 1000

function init(args)
  if args[1] then nextLine = mixline(args[1]) end
  if args[2] then lines = tonumber(args[2]) end
end

request = function()
  local body = {}
  for i = 1, lines do body[i] = nextLine() end
  return wrk.format("POST", "/v1/incidents", { ["Content-Type"] = "application/x-ndjson" }, table.concat(body, "\n") .. "\n")
end
