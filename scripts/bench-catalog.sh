#!/usr/bin/env bash
# Measures GET /v1/workouts with a filter and full-text search on a release `fitbase serve` over the demo catalog.
#
#   scripts/bench-catalog.sh [duration-seconds] [connections]
#
# SQLite by default; set FITBASE_DATABASE_URL=postgres://… to measure PostgreSQL.
set -euo pipefail
cd "$(dirname "$0")/.."
duration="${1:-15}"
connections="${2:-16}"
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
path="/v1/workouts?phase=luteal&equipment=yogaMat&equipment=dumbbells&q=strength&limit=20"
echo "server: $url; $(curl -fsS "$url$path" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["items"]), "workouts match")')"

for query in "$path" "/v1/workouts?limit=20"; do
  echo
  echo "== GET $query, ${duration}s, ${connections} connections"
  wrk -t2 -c"$connections" -d"${duration}s" --latency "$url$query"
done
echo
echo "server RSS after the runs: $(awk '/VmRSS/ {print $2, $3}' /proc/$pid/status)"
