#!/usr/bin/env bash
# Measures realtime events on a release `fitbase serve` on loopback: the latency from a workout log request to the
# leaderboard event reaching SUBSCRIBERS open SSE streams (p50, p99), then how many streams one instance holds at once
# and its RSS while holding them.
#
#   scripts/bench-events.sh [subscribers] [rounds] [extra-connections]
#
# SQLite by default; set FITBASE_DATABASE_URL=postgres://… to measure PostgreSQL.
set -euo pipefail
cd "$(dirname "$0")/.."
subscribers="${1:-100}"
rounds="${2:-30}"
extra="${3:-1000}"
BENCH_NEEDS_WRK=0
ulimit -n 65536 2>/dev/null || true
# The bench opens many streams per account (10 "devices" per member, then its capacity streams): lift the per-account
# limit (5 by default), which would otherwise end all but each account's newest five.
export FITBASE_MAX_STREAMS_PER_USER="${FITBASE_MAX_STREAMS_PER_USER:-1000000}"
# shellcheck source=scripts/bench-server.sh
source scripts/bench-server.sh
echo "server: $url"
python3 scripts/bench-events.py "$url" "$subscribers" "$rounds" "$extra" "$work/ready" &
bench=$!
while kill -0 "$bench" 2>/dev/null && [ ! -f "$work/ready" ]; do sleep 0.2; done
[ -f "$work/ready" ] && echo "server RSS with the streams open: $(awk '/VmRSS/ {print $2, $3}' /proc/$pid/status)"
wait "$bench"
