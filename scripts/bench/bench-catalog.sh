#!/usr/bin/env bash
# Measures GET /v1/workouts with a filter and full-text search on a release `fitbase serve` over the demo catalog.
#
#   scripts/bench/bench-catalog.sh [duration-seconds] [connections]
#
# SQLite by default; set FITBASE_DATABASE_URL=postgres://… to measure PostgreSQL.
set -euo pipefail
cd "$(dirname "$0")/../.."
duration="${1:-15}"
connections="${2:-16}"
# shellcheck source=scripts/bench/bench-server.sh
source scripts/bench/bench-server.sh
path="/v1/workouts?phase=luteal&equipment=yogaMat&equipment=dumbbells&q=strength&limit=20"
echo "server: $url; $(curl -fsS "$url$path" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["items"]), "workouts match")')"

for query in "$path" "/v1/workouts?limit=20"; do
  echo
  echo "== GET $query, ${duration}s, ${connections} connections"
  wrk -t2 -c"$connections" -d"${duration}s" --latency "$url$query"
done
echo
echo "server RSS after the runs: $(awk '/VmRSS/ {print $2, $3}' /proc/$pid/status)"
