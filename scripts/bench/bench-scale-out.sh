#!/usr/bin/env bash
# Scale-out on PostgreSQL: create (POST /v1/history), own list (GET /v1/history?limit=20) and sync push
# (POST /v1/sync/push, batches of workoutLogs upserts) against one `fitbase serve` instance, then against two sharing
# one database, both times behind haproxy (http mode, round robin). Prints a markdown table (req/s, p50, p99 with one
# and with two instances, the ratio), the requests each instance answered and the CPU seconds of every process over
# each run (instances, haproxy, wrk, PostgreSQL, the rest of the machine) — on a small machine they all share the
# cores, so read the ratio with those figures.
#
#   FITBASE_DATABASE_URL=postgres://… scripts/bench/bench-scale-out.sh [duration-seconds] [connections] [batch]
#                                                                                               (default 10 32 100)
#
# Each configuration gets a fresh database on FITBASE_DATABASE_URL's server, created for it and dropped after (psql
# must be installed; the URL's user must be allowed to create databases). The instances share one generated
# FITBASE_MASTER_KEY and the proxy's URL as FITBASE_PUBLIC_URL, as docs/deploying.md asks; rate
# limits are off. CONNECTIONS accounts (BENCH_ACCOUNTS overrides) spread the load, so one user's row lock does not
# serialise it. scripts/bench/bench-scale-out.py's header says the rest. Uses FITBASE_BIN when set (nothing is
# built), else builds the release fitbase. BENCH_KEEP=1 keeps the temp dir; BENCH_JSON=FILE writes the figures as
# JSON. Exits 1 when wrk saw a non-2xx answer or a socket error, or a pushed mutation was not applied.
# BENCH_INSTANCES=1,2,3 runs more configurations (default 1,2); BENCH_CPU_QUOTA=0.3 confines each instance to 0.3
# cores in a cgroup of its own (cgroup v1, as root), PostgreSQL left outside: scale-out shown on a small machine.
#
#   sudo BENCH_INSTANCES=1,2,3 BENCH_CPU_QUOTA=0.3 FITBASE_DATABASE_URL=… scripts/bench/bench-scale-out.sh 10 32
#
#   FITBASE_BIN=/tmp/fitbase FITBASE_DATABASE_URL='postgres://fitbase@127.0.0.1:5433/postgres?tlsmode=disable' \
#     scripts/bench/bench-scale-out.sh 5
set -euo pipefail
cd "$(dirname "$0")/../.."
duration="${1:-10}"
connections="${2:-32}"
batch="${3:-100}"

case "${FITBASE_DATABASE_URL:-}" in
  postgres://* | postgresql://*) ;;
  *) echo "set FITBASE_DATABASE_URL=postgres://… (a server where the user may create databases)"; exit 1 ;;
esac
for tool in wrk haproxy psql; do
  command -v "$tool" >/dev/null || { echo "$tool is needed: apt-get install wrk haproxy postgresql-client"; exit 1; }
done
ulimit -n 65536 2>/dev/null || true

if [ -n "${FITBASE_BIN:-}" ]; then
  [ -x "$FITBASE_BIN" ] || { echo "FITBASE_BIN=$FITBASE_BIN is not an executable"; exit 1; }
  fitbase_version="binary $FITBASE_BIN"
else
  log=$(swift build -c release --product fitbase 2>&1) || { echo "$log" | tail -n 40; echo "swift build -c release --product fitbase failed"; exit 1; }
  FITBASE_BIN="$(swift build -c release --show-bin-path)/fitbase"
  fitbase_version="$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- Sources Package.swift || echo '+changes')"
fi

echo "$(wrk --version 2>&1 | head -n 1); $(haproxy -v | head -n 1 | cut -d' ' -f1-3); FitBase $fitbase_version; $(nproc) cores"
FITBASE_BIN="$FITBASE_BIN" python3 scripts/bench/bench-scale-out.py "$duration" "$connections" "$batch"
