#!/usr/bin/env bash
# The view-model journey (fitbase-journey) against a fresh `fitbase serve` that sends its pushes through APNsProvider to
# fitbase-fake-apns (HTTP/2 over TLS on loopback, every request checked as Apple does): the journey sees its pushes
# arrive in the fake's record. Stops everything it started.
#
#   scripts/ci/journey.sh [BIN_DIR]
#
# BIN_DIR holds fitbase, fitbase-journey and fitbase-fake-apns (default: `swift build --show-bin-path`, built already).
set -euo pipefail
cd "$(dirname "$0")/../.."
bin="${1:-$(swift build --show-bin-path)}"
work="$(mktemp -d /tmp/fitbase-journey.XXXXXX)"
fake_pid=""
serve_pid=""
cleanup() {
  [ -n "$serve_pid" ] && kill -TERM "$serve_pid" 2>/dev/null
  [ -n "$fake_pid" ] && kill "$fake_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

"$bin/fitbase-fake-apns" --ca-out "$work/apns-ca.pem" --key-out "$work/apns-key.p8" --team-id JOURNEY001 --key-id JOURNEYK01 \
  --topic app.fitbase.journey --record "$work/apns.jsonl" >"$work/apns.out" &
fake_pid=$!
for _ in $(seq 100); do grep -q '^port ' "$work/apns.out" 2>/dev/null && break; sleep 0.1; done
apns_port="$(awk '/^port /{print $2}' "$work/apns.out")"
[ -n "$apns_port" ] || { echo "fitbase-fake-apns printed no port"; exit 1; }

# StoreKit testing transactions (unsigned, development only) for the purchase step; the journey reads the bundle id.
export FITBASE_APPSTORE_BUNDLE_ID=com.example.journey FITBASE_APPSTORE_ENVIRONMENT=Sandbox FITBASE_APPSTORE_ALLOW_XCODE=true
# The social beta step signs up accounts until one is inside a 10 % rollout and one outside: more than the default 20
# sign-ups an hour from one address.
export FITBASE_RATE_LIMIT_SIGNUPS_ADDRESS=500/1h
FITBASE_APNS_TEAM_ID=JOURNEY001 FITBASE_APNS_KEY_ID=JOURNEYK01 FITBASE_APNS_KEY_FILE="$work/apns-key.p8" \
  FITBASE_APNS_TOPIC=app.fitbase.journey FITBASE_APNS_TEST_GATEWAY_URL="https://127.0.0.1:$apns_port" \
  FITBASE_APNS_TEST_CA_FILE="$work/apns-ca.pem" \
  "$bin/fitbase" serve --port 0 --data-dir "$work/data" >"$work/serve.out" 2>"$work/serve.err" &
serve_pid=$!
source scripts/ci/serve-url.sh
url=$(wait_for_serve_url "$serve_pid" "$work")

# The social beta step runs `fitbase config` on the server's data directory, as an operator would.
FITBASE_JOURNEY_APNS_RECORD="$work/apns.jsonl" FITBASE_JOURNEY_CLI="$bin/fitbase" FITBASE_JOURNEY_DATA_DIR="$work/data" \
  "$bin/fitbase-journey" "$url"

# The console's Reports page shows what the journey's apps reported: the offline leaderboard error and the leaderboard
# fetch timings against their 2 s budget (an administrator signs in with a cookie jar, as a browser would).
password="correct horse battery staple"
curl -fsS -H 'Content-Type: application/json' -d "{\"email\":\"reports@journey.test\",\"password\":\"$password\"}" "$url/v1/auth/signup" >/dev/null
"$bin/fitbase" admin grant-role reports@journey.test admin --data-dir "$work/data"
jar="$work/cookies"
csrf=$(curl -fsS -c "$jar" -b "$jar" "$url/console/signin" | sed -n 's/.*name="csrf" value="\([^"]*\)".*/\1/p' | head -1)
curl -fsS -o /dev/null -c "$jar" -b "$jar" --data-urlencode "csrf=$csrf" --data-urlencode "email=reports@journey.test" \
  --data-urlencode "password=$password" "$url/console/signin"
curl -fsS -b "$jar" "$url/console/reports" >"$work/reports.html"
grep -q '<code>offline</code>' "$work/reports.html" || { echo "the console's Reports page does not list the offline error"; exit 1; }
grep -q 'leaderboard.fetch</code> — budget 2000 ms' "$work/reports.html" || { echo "the console's Reports page has no leaderboard.fetch chart"; exit 1; }
echo "journey: the console's Reports page lists the apps' offline error and leaderboard fetch timings"
