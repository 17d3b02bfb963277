#!/usr/bin/env bash
# Measures APNsProvider's throughput against fitbase-fake-apns (HTTP/2 over TLS on loopback, every request checked as
# Apple does: provider token signature, headers, payload) in a second process. Release build.
#
#   scripts/bench/bench-apns.sh [pushes [in-flight]]
#
# Prints the provider's pushes/s, then the fake's count of accepted pushes, provider tokens and TCP connections.
set -euo pipefail
cd "$(dirname "$0")/../.."
pushes="${1:-10000}"
concurrency="${2:-1000}"
swift build -c release --product fitbase-fake-apns >/dev/null
swift build -c release --product fitbase-apns-bench >/dev/null
bin="$(swift build -c release --show-bin-path)"
work="$(mktemp -d)"
fake_pid=""
cleanup() { [ -n "$fake_pid" ] && kill "$fake_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

"$bin/fitbase-fake-apns" --ca-out "$work/ca.pem" --key-out "$work/key.p8" --expect "$((pushes + 1))" >"$work/fake.out" &
fake_pid=$!
for _ in $(seq 100); do grep -q '^port ' "$work/fake.out" 2>/dev/null && break; sleep 0.1; done
port="$(awk '/^port /{print $2}' "$work/fake.out")"

FITBASE_APNS_TEAM_ID=BENCHTEAM1 FITBASE_APNS_KEY_ID=BENCHKEY01 FITBASE_APNS_KEY_FILE="$work/key.p8" \
FITBASE_APNS_TOPIC=app.fitbase.bench FITBASE_APNS_TEST_GATEWAY_URL="https://127.0.0.1:$port" \
FITBASE_APNS_TEST_CA_FILE="$work/ca.pem" \
    "$bin/fitbase-apns-bench" "$pushes" "$concurrency"

for _ in $(seq 50); do grep -q '^accepted ' "$work/fake.out" && break; sleep 0.1; done
echo "fake: $(grep '^accepted ' "$work/fake.out" || echo 'summary not printed')"
