#!/usr/bin/env bash
# Kill -9 durability check on SQLite (and PostgreSQL when FITBASE_TEST_POSTGRES_URL is set): a write load, `kill -9`
# mid-load, restart, every acknowledged write found through the API and `fitbase audit verify` passing.
# See scripts/ci/durability-check.py for the details.
#
#   scripts/ci/durability-check.sh [path/to/fitbase] [durability-check.py options]
#
# The binary is the first argument, else $FITBASE_BIN, else the debug build's (`swift build --show-bin-path`).
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then
  FITBASE_BIN=$1
  shift
fi
export FITBASE_BIN="${FITBASE_BIN:-$(swift build --show-bin-path)/fitbase}"
exec python3 scripts/ci/durability-check.py "$@"
