-- wrk script of `python -m bench load`: one player per connection (wrk runs one thread per
-- connection, so each thread's state is one client's). BENCH_SCENARIO is casino_war (one-chip
-- bets naming the table's rules, every tie answered by war), sota (nordic games of one sweet)
-- or baseline (one insert); BENCH_TOKENS names a file of bearer tokens, one a line, and
-- BENCH_BET is the Casino War bet's body. A Casino War round that ties takes two requests;
-- a round counts once it is settled.

local scenario = os.getenv("BENCH_SCENARIO")
local tokens = {}
local threads = {}

function setup(thread)
  if #tokens == 0 and scenario ~= "baseline" then
    for line in io.lines(os.getenv("BENCH_TOKENS")) do
      tokens[#tokens + 1] = line
    end
  end
  table.insert(threads, thread)
  thread:set("token", tokens[#threads] or "")
end

function init(args)
  rounds, ties, failures, pending = 0, 0, 0, nil
  json = { ["Content-Type"] = "application/json" }
  authorized = { ["Content-Type"] = "application/json", ["Authorization"] = "Bearer " .. token }
end

function request()
  if scenario == "baseline" then
    return wrk.format("POST", "/insert", json, "{}")
  elseif scenario == "sota" then
    return wrk.format("POST", "/api/v1/sota/games", authorized, '{"stake": 1, "preset": "nordic"}')
  elseif pending then
    local path = "/api/v1/casino-war/rounds/" .. pending .. "/decision"
    return wrk.format("POST", path, authorized, '{"choice": "war"}')
  end
  return wrk.format("POST", "/api/v1/casino-war/rounds", authorized, os.getenv("BENCH_BET"))
end

function response(status, headers, body)
  if status ~= 200 and status ~= 201 then
    failures = failures + 1
    pending = nil
    if failures <= 3 then
      io.stderr:write("HTTP " .. status .. ": " .. string.sub(body or "", 1, 300) .. "\n")
    end
    return
  end
  if scenario == "casino_war" and string.find(body, '"status":%s*"awaiting_decision"') then
    pending = string.match(body, '"id":%s*(%d+)')
    ties = ties + 1
  else
    pending = nil
    rounds = rounds + 1
  end
end

function done(summary, latency, requests)
  local settled, tied, failed = 0, 0, 0
  for _, thread in ipairs(threads) do
    settled = settled + thread:get("rounds")
    tied = tied + thread:get("ties")
    failed = failed + thread:get("failures")
  end
  local e = summary.errors
  io.write(string.format(
    'BENCH {"requests": %d, "duration_us": %d, "rounds": %d, "ties": %d, "failures": %d, ' ..
    '"socket_errors": %d, "p50_us": %d, "p95_us": %d, "p99_us": %d, "max_us": %d}\n',
    summary.requests, summary.duration, settled, tied, failed,
    e.connect + e.read + e.write + e.timeout,
    latency:percentile(50), latency:percentile(95), latency:percentile(99), latency.max))
end
