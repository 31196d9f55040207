-- wrk script: POST /v1/incidents with the suite's mix (bench/http/mixline.lua),
-- one incident per request. Argument: a prefix, so each run's keys are new.
--   wrk -t1 -c64 -d10s -s bench/http/mix.lua URL -- PREFIX
-- Run from the repository root (the mix is required as bench.http.mixline).
local mixline = require("bench.http.mixline")
local nextLine = mixline("run")

function init(args)
  if args[1] then nextLine = mixline(args[1]) end
end

request = function()
  return wrk.format("POST", "/v1/incidents", { ["Content-Type"] = "application/json" }, nextLine())
end
