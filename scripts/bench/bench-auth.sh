#!/usr/bin/env bash
# Measures sign-in and refresh throughput of a release `fitbase serve` on loopback with wrk.
#
#   scripts/bench/bench-auth.sh [duration-seconds] [connections]
#
# Builds the release binary, starts it on a temp data dir (SQLite, or PostgreSQL when FITBASE_DATABASE_URL is set),
# creates users, then runs wrk against POST /v1/auth/signin (bcrypt at FITBASE_BCRYPT_COST, default 12) and
# POST /v1/auth/refresh (each connection keeps rotating its own chain of refresh tokens). Prints wrk's summaries.
set -euo pipefail
cd "$(dirname "$0")/../.."
duration="${1:-15}"
connections="${2:-8}"
# shellcheck source=scripts/bench/bench-server.sh
source scripts/bench/bench-server.sh
echo "server: $url (bcrypt cost ${FITBASE_BCRYPT_COST:-12}, database $(grep '^Database' "$work/out" | cut -d' ' -f2-))"

# One account to sign in to, and a pool of sessions whose refresh tokens the refresh run rotates.
curl -fsS -o /dev/null -X POST "$url/v1/auth/signup" -H 'content-type: application/json' \
  -d '{"email":"bench@example.com","password":"benchmark password"}'
: >"$work/tokens"
for _ in $(seq 1 $((connections * 4))); do
  curl -fsS -X POST "$url/v1/auth/signin" -H 'content-type: application/json' \
    -d '{"email":"bench@example.com","password":"benchmark password"}' \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["refreshToken"])' >>"$work/tokens"
done

cat >"$work/signin.lua" <<'LUA'
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"email":"bench@example.com","password":"benchmark password"}'
done = function(summary, latency, requests)
  io.write(string.format("non-2xx or errors: %d\n", summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
LUA

cat >"$work/refresh.lua" <<LUA
-- Every thread owns a disjoint share of live refresh tokens: a request spends one, its response queues the successor.
-- (Spending a token twice would be reuse, which ends the session by design.)
local threads, counter = 2, 0
setup = function(thread) thread:set("index", counter); counter = counter + 1 end
local queue, failures = {}, 0
init = function(args)
  local line_number = 0
  for line in io.lines("$work/tokens") do
    if line_number % threads == index then table.insert(queue, line) end
    line_number = line_number + 1
  end
end
request = function()
  local token = table.remove(queue, 1) or "exhausted"
  return wrk.format("POST", "/v1/auth/refresh", {["Content-Type"] = "application/json"}, '{"refreshToken":"' .. token .. '"}')
end
response = function(status, headers, body)
  local token = string.match(body, '"refreshToken":"([^"]+)"')
  if token then table.insert(queue, token) else failures = failures + 1 end
end
done = function(summary, latency, requests)
  io.write(string.format("non-2xx or errors: %d\n", summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
LUA

echo
echo "== POST /v1/auth/signin, ${duration}s, ${connections} connections"
wrk -t2 -c"$connections" -d"${duration}s" --latency -s "$work/signin.lua" "$url/v1/auth/signin"
echo
echo "== POST /v1/auth/refresh (rotating), ${duration}s, ${connections} connections"
wrk -t2 -c"$connections" -d"${duration}s" --latency -s "$work/refresh.lua" "$url/v1/auth/refresh"
echo
echo "server RSS after the runs: $(awk '/VmRSS/ {print $2, $3}' /proc/$pid/status)"
