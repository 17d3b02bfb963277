#!/usr/bin/env bash
# Measures whether one user's health reads hold up another user's writes: the latency of user B logging workouts one
# after another (p50, p99) alone, then while user A runs READERS concurrent `GET /v1/health/samples` without pause
# (every read appends to A's audit chain), then while a user without the consent floods the same endpoint (refusals
# are counted, not written). Release `fitbase serve` on loopback.
#
#   scripts/bench/bench-audit.sh [readers] [seconds]
#
# SQLite by default; set FITBASE_DATABASE_URL=postgres://… to measure PostgreSQL.
set -euo pipefail
cd "$(dirname "$0")/../.."
readers="${1:-50}"
seconds="${2:-10}"
BENCH_NEEDS_WRK=0
# shellcheck source=scripts/bench/bench-server.sh
source scripts/bench/bench-server.sh
echo "server: $url"
python3 scripts/bench/bench-audit.py "$url" "$readers" "$seconds"
