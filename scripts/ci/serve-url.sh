# Sourced by the CI scripts. wait_for_serve_url PID DIR prints the URL a `fitbase serve` (started with its output in
# DIR/serve.out and DIR/serve.err) listens on; it fails, showing the server's output, when the server died or printed
# no URL within 60 s.
wait_for_serve_url() {
  local pid=$1 dir=$2 found=""
  for _ in $(seq 1 120); do
    found=$(grep -o 'http://127.0.0.1:[0-9]*' "$dir/serve.out" 2>/dev/null | head -n 1 || true)
    if [ -n "$found" ]; then
      echo "$found"
      return 0
    fi
    kill -0 "$pid" 2>/dev/null || { echo "fitbase serve died:" >&2; cat "$dir/serve.out" "$dir/serve.err" >&2; return 1; }
    sleep 0.5
  done
  echo "fitbase serve printed no URL" >&2
  cat "$dir/serve.out" "$dir/serve.err" >&2
  return 1
}
