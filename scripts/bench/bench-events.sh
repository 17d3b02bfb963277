#!/usr/bin/env bash
# Measures realtime events on release `fitbase serve` instances on loopback: the latency from a workout log request to
# the leaderboard event reaching SUBSCRIBERS open SSE streams (p50, p99, per instance), then IDLE more streams held open
# at once: the instance's RSS while holding them and (PostgreSQL) the table reads per second at rest, without and with
# the streams open.
#
#   scripts/bench/bench-events.sh [subscribers] [rounds] [idle-streams]
#
# SQLite by default; set FITBASE_DATABASE_URL=postgres://… to measure PostgreSQL, and BENCH_INSTANCES=2 as well to run
# two instances on it (same master key, own data directories): the streams are spread over both, the workouts are
# logged through the first, the idle streams are held by the first.
set -euo pipefail
cd "$(dirname "$0")/../.."
subscribers="${1:-100}"
rounds="${2:-30}"
idle="${3:-1000}"
instances="${BENCH_INSTANCES:-1}"
BENCH_NEEDS_WRK=0
ulimit -n 65536 2>/dev/null || true
# The bench opens many streams per account (a tenth of them per member): lift the per-account limit (5 by default),
# which would otherwise end all but each account's newest five.
export FITBASE_MAX_STREAMS_PER_USER="${FITBASE_MAX_STREAMS_PER_USER:-1000000}"
if [ "$instances" -gt 1 ]; then
    [ -n "${FITBASE_DATABASE_URL:-}" ] || { echo "BENCH_INSTANCES=2 needs FITBASE_DATABASE_URL=postgres://…"; exit 1; }
    export FITBASE_MASTER_KEY="${FITBASE_MASTER_KEY:-$(head -c 32 /dev/urandom | base64)}"
fi
# shellcheck source=scripts/bench/bench-server.sh
source scripts/bench/bench-server.sh
urls="$url"
pids="$pid"
if [ "$instances" -gt 1 ]; then
    "$bin" serve --port 0 --data-dir "$work/data-b" --log-level warning >"$work/out-b" 2>"$work/err-b" &
    pid_b=$!
    trap 'kill -TERM $pid_b 2>/dev/null; cleanup' EXIT
    for _ in $(seq 1 100); do grep -q 'listening on' "$work/out-b" 2>/dev/null && break; sleep 0.1; done
    url_b=$(grep -o 'http://127.0.0.1:[0-9]*' "$work/out-b" | head -n 1)
    [ -n "$url_b" ] || { echo "the second instance did not start:"; cat "$work/out-b" "$work/err-b"; exit 1; }
    urls="$url,$url_b"
    pids="$pid $pid_b"
fi
echo "servers: $urls"

# Table reads (sequential and index scans) of the FitBase tables so far (PostgreSQL; empty on SQLite): what queries do,
# without the transactions of autovacuum, which a fresh database runs now and then.
reads() {
    [ -n "${FITBASE_DATABASE_URL:-}" ] || return 0
    psql "${FITBASE_DATABASE_URL%%\?*}" -Atc "SELECT sum(seq_scan + coalesce(idx_scan, 0)) FROM pg_stat_user_tables"
}
# Table reads per second over 10 seconds, from 12 seconds after the last activity (an idle backend may take 10 seconds
# to report its counts).
at_rest() {
    local before after
    sleep 12
    before=$(reads)
    sleep 10
    after=$(reads)
    [ -n "$before" ] && echo "scale=1; ($after - $before) / 10" | bc
}
[ -n "${FITBASE_DATABASE_URL:-}" ] && echo "database at rest, no streams open: $(at_rest) table reads/s"

python3 scripts/bench/bench-events.py "$urls" "$subscribers" "$rounds" "$idle" "$work/ready" "$work/done" &
bench=$!
while kill -0 "$bench" 2>/dev/null && [ ! -f "$work/ready" ]; do sleep 0.2; done
if [ -f "$work/ready" ]; then
    [ -n "${FITBASE_DATABASE_URL:-}" ] && echo "database at rest with the streams open: $(at_rest) table reads/s"
    for p in $pids; do echo "server $p RSS with the streams open: $(awk '/VmRSS/ {print $2, $3}' /proc/$p/status)"; done
    touch "$work/done"
fi
wait "$bench"
