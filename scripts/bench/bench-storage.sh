#!/usr/bin/env bash
# Measures the storage layer alone: single-row primary-key SELECTs and single-row INSERT transactions through
# `Database` (one task, then 16 tasks), without HTTP in the way. Release build.
#
#   scripts/bench/bench-storage.sh [selects [inserts]]
#
# SQLite in a temp directory by default; set FITBASE_DATABASE_URL=postgres://… (an empty database) to measure PostgreSQL.
set -euo pipefail
cd "$(dirname "$0")/../.."
selects="${1:-20000}"
inserts="${2:-5000}"
swift build -c release --product fitbase-storage-bench >/dev/null
"$(swift build -c release --show-bin-path)/fitbase-storage-bench" "$selects" "$inserts" ${FITBASE_DATABASE_URL:+"$FITBASE_DATABASE_URL"}
