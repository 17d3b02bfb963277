#!/usr/bin/env bash
# Measures sign-in and refresh throughput of a release `fitbase serve` on loopback with wrk.
#
#   scripts/bench-auth.sh [duration-seconds] [connections]
#
# Builds the release binary, starts it on a temp data dir (SQLite, or PostgreSQL when FITBASE_DATABASE_URL is set),
# creates users, then runs wrk against POST /v1/auth/signin (bcrypt at FITBASE_BCRYPT_COST, default 12) and
# POST /v1/auth/refresh (each connection keeps rotating its own chain of refresh tokens). Prints wrk's summaries.
set -euo pipefail
cd "$(dirname "$0")/.."
duration="${1:-15}"
connections="${2:-8}"
command -v wrk >/dev/null || { echo "wrk is needed: apt-get install wrk"; exit 1; }

swift build -c release --product fitbase >/dev/null
bin="$(swift build -c release --show-bin-path)/fitbase"
work=$(mktemp -d /tmp/fitbase-bench.XXXXXX)
pid=""
cleanup() { [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

"$bin" serve --port 0 --data-dir "$work/data" --log-level warning >"$work/out" 2>"$work/err" &
pid=$!
for _ in $(seq 1 100); do grep -q 'listening on' "$work/out" 2>/dev/null && break; sleep 0.1; done
url=$(grep -o 'http://127.0.0.1:[0-9]*' "$work/out" | head -n 1)
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
