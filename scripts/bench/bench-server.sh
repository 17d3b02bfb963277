# Sourced by the bench-*.sh scripts: builds the release binary and starts `fitbase serve` on a free port with a temp
# data dir (SQLite, or FITBASE_DATABASE_URL), setting $url, $work and $pid and stopping the server on exit.
# Set BENCH_NEEDS_WRK=0 in scripts that do not load the server with wrk.
if [ "${BENCH_NEEDS_WRK:-1}" = 1 ]; then command -v wrk >/dev/null || { echo "wrk is needed: apt-get install wrk"; exit 1; }; fi

# FITBASE_BENCH_BIN: a release `fitbase` built elsewhere (another scratch path); otherwise it is built here.
if [ -z "${FITBASE_BENCH_BIN:-}" ]; then swift build -c release --product fitbase >/dev/null; fi
# The benchmarks drive one account far past any app's pace: the request rate limits (docs/configuration.md) would answer
# most of it with 429. They measure the server, so they run with the limits off unless told otherwise.
export FITBASE_RATE_LIMITS="${FITBASE_RATE_LIMITS:-off}"
bin="${FITBASE_BENCH_BIN:-$(swift build -c release --show-bin-path)/fitbase}"
work=$(mktemp -d /tmp/fitbase-bench.XXXXXX)
pid=""
cleanup() { [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

"$bin" serve --port 0 --data-dir "$work/data" --log-level warning >"$work/out" 2>"$work/err" &
pid=$!
for _ in $(seq 1 100); do grep -q 'listening on' "$work/out" 2>/dev/null && break; sleep 0.1; done
url=$(grep -o 'http://127.0.0.1:[0-9]*' "$work/out" | head -n 1)
[ -n "$url" ] || { echo "fitbase serve did not start:"; cat "$work/out" "$work/err"; exit 1; }
