-- wrk script for `make bench`: POSTs MCP requests and checks every answer is a real result.
--
-- The requests come from the environment, so one script serves every HTTP workload:
--   BENCH_COUNT        how many requests to cycle through (1 when absent)
--   BENCH_BODY_<i>     the JSON-RPC body of request i (1-based); __ID__ in it becomes a fresh integer id per
--                      request (concurrent requests of one legacy session need distinct ids)
--   BENCH_HEADERS_<i>  its extra headers, "Name: value" pairs separated by "|"
--   BENCH_EXPECT       a substring every good answer contains (e.g. "text":"hello")
--   BENCH_HISTOGRAM    optional: a file done() writes the latency histogram to, one "microseconds count" line
--                      per distinct latency, so runs taken in slices can be pooled into exact percentiles
-- An answer is bad when its status is not 200, it lacks BENCH_EXPECT, or it carries a JSON-RPC error or an
-- isError result. done() prints one machine-readable line:
--   BENCH requests=N seconds=S rate=R p50_us=A p99_us=B bad=K socket_errors=E

local threads = {}

function setup(thread)
  thread:set("first_id", #threads * 1000000000)
  table.insert(threads, thread)
end

local requests = {}  -- i -> {headers = ..., body = ...}
local prebuilt = {}  -- i -> the formatted request, when its body has no __ID__
local next_request = 1
local next_id = 0
local expect = os.getenv("BENCH_EXPECT") or '"result"'
bad = 0

function init(args)
  local count = tonumber(os.getenv("BENCH_COUNT") or "1")
  for i = 1, count do
    local body = os.getenv("BENCH_BODY_" .. i)
    if body == nil then
      error("BENCH_BODY_" .. i .. " is not set")
    end
    local headers = {
      ["Content-Type"] = "application/json",
      ["Accept"] = "application/json, text/event-stream",
    }
    for pair in string.gmatch(os.getenv("BENCH_HEADERS_" .. i) or "", "[^|]+") do
      local name, value = string.match(pair, "^%s*([^:]+):%s*(.-)%s*$")
      headers[name] = value
    end
    requests[i] = {headers = headers, body = body}
    local at = string.find(body, "__ID__", 1, true)
    if not at then
      prebuilt[i] = wrk.format("POST", nil, headers, body)
    else
      if string.find(body, "__ID__", at + 6, true) then
        error("BENCH_BODY_" .. i .. " has __ID__ more than once")
      end
      -- The request around its id, put together once: per request only the id and Content-Length are
      -- written (wrk.format and gsub per request cost wrk half its CPU, and wrk was the floor's bottleneck).
      requests[i].before = string.sub(body, 1, at - 1)
      requests[i].after = string.sub(body, at + 6)
      local lines = {"POST " .. wrk.path .. " HTTP/1.1", "Host: " .. wrk.headers["Host"]}
      for name, value in pairs(headers) do
        table.insert(lines, name .. ": " .. value)
      end
      table.insert(lines, "Content-Length: ")
      requests[i].head = table.concat(lines, "\r\n")
    end
  end
  next_id = first_id or 0
end

function request()
  local i = next_request
  next_request = next_request % #requests + 1
  if prebuilt[i] then
    return prebuilt[i]
  end
  next_id = next_id + 1
  local r = requests[i]
  local body = r.before .. next_id .. r.after
  return r.head .. #body .. "\r\n\r\n" .. body
end

function response(status, headers, body)
  if status ~= 200
      or not string.find(body, expect, 1, true)
      or string.find(body, '"error":{', 1, true)
      or string.find(body, '"isError":true', 1, true) then
    bad = bad + 1
  end
end

function done(summary, latency, requests_stats)
  local total_bad = 0
  for _, thread in ipairs(threads) do
    total_bad = total_bad + thread:get("bad")
  end
  local e = summary.errors
  local seconds = summary.duration / 1e6
  io.write(string.format(
    "BENCH requests=%d seconds=%.3f rate=%.0f p50_us=%d p99_us=%d bad=%d socket_errors=%d\n",
    summary.requests, seconds, summary.requests / seconds, latency:percentile(50), latency:percentile(99),
    total_bad, e.connect + e.read + e.write + e.timeout))
  local histogram = os.getenv("BENCH_HISTOGRAM")
  if histogram and histogram ~= "" then
    local lines = {}
    for i = 1, #latency do -- #latency: the distinct latencies; latency(i): the i-th, and how many had it
      local us, count = latency(i)
      lines[i] = string.format("%d %d", us, count)
    end
    local f = assert(io.open(histogram, "w"))
    f:write(table.concat(lines, "\n"), "\n")
    f:close()
  end
end
