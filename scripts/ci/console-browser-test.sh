#!/usr/bin/env bash
# The operator console in a real browser: Debian's chromium and chromium-driver (installed if missing), Selenium from
# PyPI in a throw-away venv, against a fresh `fitbase serve` with an administrator and a user seeded through the API
# and `fitbase admin grant-role`. Saves a screenshot of every page into the CI output folder ($CI_OUTPUT_DIR, default
# ./ci-output), then checks `fitbase admin audit` lists what the browser did. Stops everything it started.
#
#   scripts/ci/console-browser-test.sh [BIN_DIR]
#
# BIN_DIR holds fitbase (default: `swift build --show-bin-path`, built already; a release build works the same).
set -euo pipefail
cd "$(dirname "$0")/../.."
bin="${1:-$(swift build --show-bin-path)}"
out="${CI_OUTPUT_DIR:-$PWD/ci-output}/console"
mkdir -p "$out"
rm -f "$out"/console-*.png
work="$(mktemp -d /tmp/fitbase-console.XXXXXX)"
serve_pid=""
cleanup() {
  [ -n "$serve_pid" ] && kill -TERM "$serve_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

if ! command -v chromedriver >/dev/null || ! { command -v chromium >/dev/null || command -v chromium-browser >/dev/null; }; then
  echo "installing chromium and chromium-driver from Debian"
  sudo_cmd=""
  [ "$(id -u)" = 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq chromium chromium-driver >/dev/null
fi
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q selenium

"$bin/fitbase" serve --port 0 --data-dir "$work/data" >"$work/serve.out" 2>"$work/serve.err" &
serve_pid=$!
source scripts/ci/serve-url.sh
url=$(wait_for_serve_url "$serve_pid" "$work")

# An administrator (signed up, then given the role from the server's shell) and a user with a second session (a
# "phone") for the console to revoke, in a group so the Groups page has one.
password="correct horse battery"
signup() {
  curl -fsS -H 'Content-Type: application/json' -d "{\"email\":\"$1\",\"password\":\"$password\"}" "$url/v1/auth/signup" >/dev/null
}
signup admin@console.test
signup member@console.test
"$bin/fitbase" admin grant-role admin@console.test admin --data-dir "$work/data"
session=$(curl -fsS -H 'Content-Type: application/json' \
  -d "{\"email\":\"member@console.test\",\"password\":\"$password\",\"deviceName\":\"Browser test phone\"}" "$url/v1/auth/signin")
token=$(printf '%s' "$session" | python3 -c 'import json,sys; print(json.load(sys.stdin)["accessToken"])')
curl -fsS -H 'Content-Type: application/json' -H "Authorization: Bearer $token" -d '{"name":"Browser test crew","timeZone":"Europe/Berlin"}' \
  "$url/v1/groups" >/dev/null
# A health sample, so the audit chain the System page verifies has an entry (and the user page has a value not to show).
curl -fsS -H 'Content-Type: application/json' -H "Authorization: Bearer $token" -d '{"kind":"healthData","version":"2026-11","granted":true}' \
  "$url/v1/me/consents" >/dev/null
curl -fsS -H 'Content-Type: application/json' -H "Authorization: Bearer $token" \
  -d '{"samples":[{"id":"6f1f5a52-3b7e-4c61-9a55-0d2b1c9e4a10","type":"heartRate","start":"2026-11-20T08:00:00Z","value":61.73,"unit":"count/min","sourceId":"ci"}]}' \
  "$url/v1/health/samples" | grep -q '"created":1' || { echo "the health sample was not stored"; exit 1; }

# What an app's reporter sends (FitBaseReporter: an error, a crash and leaderboard fetch timings), for the Reports page.
now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
report() {
  printf '{"id":"%s","occurredAt":"%s","appVersion":"1.4.2","platform":"ios","osVersion":"17.4.1","deviceModel":"iPhone15,2",%s}' \
    "$(python3 -c 'import uuid; print(uuid.uuid4())')" "$now" "$1"
}
reports="$(report '"kind":"error","code":"offline","location":"leaderboard.fetch"')"
reports="$reports,$(report '"kind":"crash","exceptionType":"SIGABRT","frames":[{"module":"FitBaseKit","symbol":"$s10FitBaseKit16LeaderboardModelC4loadyyYaF","offset":420}]')"
for ms in 420 610 880 1240 2650; do reports="$reports,$(report "\"kind\":\"trace\",\"operation\":\"leaderboard.fetch\",\"durationMilliseconds\":$ms")"; done
curl -fsS -H 'Content-Type: application/json' -H "Authorization: Bearer $token" -d "{\"reports\":[$reports]}" "$url/v1/reports" | grep -q '"accepted":7' \
  || { echo "the app reports were not stored"; exit 1; }

"$work/venv/bin/python" scripts/ci/console-browser-test.py --url "$url" --admin "admin@console.test:$password" \
  --user "member@console.test:$password" --user-token "$token" --out "$out"

"$bin/fitbase" admin audit --limit 100 --data-dir "$work/data" >"$work/audit.out"
for action in console.sign-in catalog.workout-created user.opened user.session-revoked system.audit-verified config.flag-saved \
  config.rollout-changed console.sign-out; do
  grep -q "$action" "$work/audit.out" || { echo "fitbase admin audit does not list $action:"; cat "$work/audit.out"; exit 1; }
done
echo "fitbase admin audit lists the browser's actions ($(wc -l <"$work/audit.out") entries)"
ls "$out"
