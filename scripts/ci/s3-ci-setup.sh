# Sourced by .ci/run before `swift test`: starts a local S3-compatible server (moto in server mode, from PyPI) for the
# media tests' S3 back end, and exports what they read:
#   FITBASE_TEST_S3_URL    s3://fitbase-test?region=us-east-1&endpoint=http://127.0.0.1:PORT (each test makes a
#                          bucket of its own named after it)
#   AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY   throw-away credentials (moto takes any)
# The server's pid is in $s3_test_server_pid for the caller's `kill`. Everything lives in $s3_test_dir, inside $work
# when the caller has one (.ci/run does, and removes it), else in $TMPDIR or /tmp.
# Needs python3 with venv and PyPI. Sets no trap and leaves the shell's options as they were.

s3_test_dir=$(mktemp -d "${work:-${TMPDIR:-/tmp}}/fitbase-s3.XXXXXX")

echo "S3 test server: installing moto[server] into $s3_test_dir/venv"
python3 -m venv "$s3_test_dir/venv" || return 1
"$s3_test_dir/venv/bin/pip" install --quiet --disable-pip-version-check 'moto[server]' </dev/null || return 1

s3_test_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
"$s3_test_dir/venv/bin/moto_server" -H 127.0.0.1 -p "$s3_test_port" </dev/null >"$s3_test_dir/server.log" 2>&1 &
s3_test_server_pid=$!

for _ in $(seq 1 60); do
  curl -fsS -o /dev/null "http://127.0.0.1:$s3_test_port/" 2>/dev/null && break
  kill -0 "$s3_test_server_pid" 2>/dev/null || break
  sleep 0.5
done
if ! curl -fsS -o /dev/null "http://127.0.0.1:$s3_test_port/" 2>/dev/null; then
  echo "S3 test server did not start:"
  cat "$s3_test_dir/server.log"
  return 1
fi
export FITBASE_TEST_S3_URL="s3://fitbase-test?region=us-east-1&endpoint=http://127.0.0.1:$s3_test_port"
export AWS_ACCESS_KEY_ID=fitbase-ci AWS_SECRET_ACCESS_KEY=fitbase-ci-secret
echo "S3 test server: moto $("$s3_test_dir/venv/bin/python" -c 'import moto; print(moto.__version__)') on 127.0.0.1:$s3_test_port"
