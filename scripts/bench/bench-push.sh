#!/usr/bin/env bash
# A challenge week's end fanned out to DEVICES phones: `week_ended` notifications, one push job per device in the
# outbox, sent by PushWorker through APNsProvider to fitbase-fake-apns (HTTP/2 over TLS on loopback, every request
# checked as Apple does). Release build.
#
#   scripts/bench/bench-push.sh [DEVICES] [DATABASE_URL]
#
# DEVICES defaults to 10000 (500 accounts of 20 devices, in 50 groups of 10). DATABASE_URL defaults to SQLite in a
# throw-away directory; give postgres://… to measure on PostgreSQL (the database is used as it is: give an empty one).
# The accounts, groups and devices are created over the HTTP API of `fitbase serve`; the server is then stopped and
# `fitbase-push-bench fanout` closes the week and sends, as one more instance on the database would. Prints the time
# to queue the pushes, the time until the last is acknowledged, and pushes/s; then the fake's own count.
set -euo pipefail
cd "$(dirname "$0")/../.."
devices="${1:-10000}"
database="${2:-}"
for product in fitbase fitbase-fake-apns fitbase-push-bench; do swift build -c release --product "$product" >/dev/null; done
bin="$(swift build -c release --show-bin-path)"
work="$(mktemp -d)"
fake_pid=""
serve_pid=""
cleanup() {
  [ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null
  [ -n "$fake_pid" ] && kill "$fake_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
[ -n "$database" ] || database="sqlite://$work/data/fitbase.sqlite"
mkdir -p "$work/data"

"$bin/fitbase-fake-apns" --ca-out "$work/ca.pem" --key-out "$work/key.p8" --expect "$devices" >"$work/fake.out" &
fake_pid=$!
for _ in $(seq 100); do grep -q '^port ' "$work/fake.out" 2>/dev/null && break; sleep 0.1; done
port="$(awk '/^port /{print $2}' "$work/fake.out")"
export FITBASE_APNS_TEAM_ID=BENCHTEAM1 FITBASE_APNS_KEY_ID=BENCHKEY01 FITBASE_APNS_KEY_FILE="$work/key.p8" \
  FITBASE_APNS_TOPIC=app.fitbase.bench FITBASE_APNS_TEST_GATEWAY_URL="https://127.0.0.1:$port" \
  FITBASE_APNS_TEST_CA_FILE="$work/ca.pem"

FITBASE_RATE_LIMITS=off FITBASE_LOG_LEVEL=error "$bin/fitbase" serve --port 0 --data-dir "$work/data" --database-url "$database" \
  >"$work/serve.out" 2>"$work/serve.err" &
serve_pid=$!
url=""
for _ in $(seq 240); do
  url=$(grep -o 'http://127.0.0.1:[0-9]*' "$work/serve.out" 2>/dev/null | head -n 1 || true)
  [ -n "$url" ] && break
  kill -0 "$serve_pid" 2>/dev/null || { cat "$work/serve.out" "$work/serve.err"; exit 1; }
  sleep 0.5
done
[ -n "$url" ] || { echo "fitbase serve printed no URL"; exit 1; }
"$bin/fitbase-push-bench" seed "$url" "$devices"
kill -TERM "$serve_pid"
wait "$serve_pid" || true
serve_pid=""

"$bin/fitbase-push-bench" fanout "$database" "$devices"
for _ in $(seq 50); do grep -q '^accepted ' "$work/fake.out" && break; sleep 0.1; done
echo "fake: $(grep '^accepted ' "$work/fake.out" || echo 'summary not printed')"
