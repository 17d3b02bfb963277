#!/usr/bin/env bash
# Measures encrypted health data on a release `fitbase serve` on loopback: ingest throughput for 1,000-sample
# batches and summary latency over DAYS days of minute-level heart rate for one user (365 days: 525,600 samples).
# Prints the server's RSS and the size of its SQLite files afterwards.
#
#   scripts/bench/bench-health.sh [days] [connections]
#
# SQLite by default; set FITBASE_DATABASE_URL=postgres://… to measure PostgreSQL.
set -euo pipefail
cd "$(dirname "$0")/../.."
days="${1:-365}"
connections="${2:-2}"
BENCH_NEEDS_WRK=0
# shellcheck source=scripts/bench/bench-server.sh
source scripts/bench/bench-server.sh
echo "server: $url"
python3 scripts/bench/bench-health.py "$url" "$days" "$connections"
echo "server RSS: $(awk '/VmRSS/ {print $2, $3}' /proc/$pid/status), peak $(awk '/VmHWM/ {print $2, $3}' /proc/$pid/status)"
[ -f "$work/data/fitbase.sqlite" ] && echo "data: $(du -sh "$work/data" | cut -f1) in $work/data"
