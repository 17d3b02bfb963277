#!/usr/bin/env bash
# Measures profile-photo uploads on a release `fitbase serve` (SQLite, or FITBASE_DATABASE_URL): the latency and rate
# of uploads of a real 12 MP JPEG, a 4000×3000 PNG and a 48 MP-class HEIC (each decoded and thumbnailed), one at a
# time and four at once, then the server's peak RSS before and after a batch of hostile uploads (decompression bombs
# and a photo whose decoder needs 196 MB). Needs Pillow and pillow-heif (pip install pillow pillow-heif).
#
#   scripts/bench/bench-photo.sh [uploads per kind]
#
# FITBASE_BENCH_BIN=path/to/fitbase measures another build (e.g. an earlier commit's, for a before/after).
set -euo pipefail
cd "$(dirname "$0")/../.."
count="${1:-20}"
BENCH_NEEDS_WRK=0
# shellcheck source=scripts/bench/bench-server.sh
source scripts/bench/bench-server.sh
echo "server: $url (pid $pid)"
python3 scripts/bench/bench-photo.py "$url" "$count" "$pid"
