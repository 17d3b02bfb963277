#!/usr/bin/env bash
# The account export's peak server memory: uploads SAMPLES heart-rate samples for one account to a `fitbase serve`
# on loopback, then reads GET /v1/me/export and reports the server's RSS before and at its highest during the export
# (sampled every 20 ms), the export's size and time, and that every sample came back.
#
#   scripts/bench/bench-export.sh [samples] [database-url]
#
# Release build by default; FITBASE_BIN=path/to/fitbase measures another build (e.g. the debug one CI makes).
set -euo pipefail
cd "$(dirname "$0")/../.."
samples="${1:-1000000}"
database="${2:-}"
if [ -z "${FITBASE_BIN:-}" ]; then
  swift build -c release --product fitbase >/dev/null
  FITBASE_BIN="$(swift build -c release --show-bin-path)/fitbase"
fi
work=$(mktemp -d /tmp/fitbase-export.XXXXXX)
pid=""
cleanup() { [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
args=(serve --port 0 --data-dir "$work/data" --log-level warning)
[ -n "$database" ] && args+=(--database-url "$database")
FITBASE_RATE_LIMITS=off FITBASE_BCRYPT_COST=4 "$FITBASE_BIN" "${args[@]}" >"$work/out" 2>"$work/err" &
pid=$!
for _ in $(seq 1 300); do grep -q 'listening on' "$work/out" 2>/dev/null && break; sleep 0.1; done
url=$(grep -o 'http://127.0.0.1:[0-9]*' "$work/out" | head -n 1)
[ -n "$url" ] || { echo "fitbase serve did not start:"; cat "$work/out" "$work/err"; exit 1; }
python3 scripts/bench/bench-export.py "$url" "$pid" "$samples"
