#!/usr/bin/env bash
# Measures offline-first sync through the Swift SDK on loopback: one device of a pro account queues COUNT changes
# (half training plans, half workout logs) and pushes them in batches of 500; a second device pulls them all.
# Prints both times and the server's peak RSS (VmHWM) over the run.
#
#   scripts/bench/bench-sync.sh [count]
#
# SQLite by default; set FITBASE_DATABASE_URL=postgres://… to measure PostgreSQL.
set -euo pipefail
cd "$(dirname "$0")/../.."
count="${1:-10000}"
BENCH_NEEDS_WRK=0
# shellcheck source=scripts/bench/bench-server.sh
source scripts/bench/bench-server.sh
swift build -c release --product fitbase-sync-bench >/dev/null
echo "server: $url (RSS at start: $(awk '/VmRSS/ {print $2, $3}' /proc/$pid/status))"
# Half the changes are training plans, and a free account keeps one: sign up, then grant the bench account pro.
email="bench-$RANDOM$RANDOM@example.com"
password="benchmark password"
curl -fsS -o /dev/null -H 'Content-Type: application/json' \
  -d "{\"email\":\"$email\",\"password\":\"$password\"}" "$url/v1/auth/signup"
"$bin" admin grant-tier "$email" pro --days 1 --data-dir "$work/data" >/dev/null  # FITBASE_DATABASE_URL applies too
"$(swift build -c release --show-bin-path)/fitbase-sync-bench" "$url" "$count" "$email" "$password"
echo "server peak RSS during the run: $(awk '/VmHWM/ {print $2, $3}' /proc/$pid/status)"
