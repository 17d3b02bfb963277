# Sourced by .ci/run before `swift test`: starts a real SMTP server (scripts/ci/smtp-test-server.py, aiosmtpd from PyPI)
# with STARTTLS, AUTH and a throw-away CA, for SMTPMailerTests' real-server test, and exports what that test reads:
#   FITBASE_TEST_SMTP_URL      smtp://USER:PASSWORD@localhost:PORT (STARTTLS required, AUTH required)
#   FITBASE_TEST_SMTP_MAILDIR  where the server writes each message (NAME.eml, NAME.json)
#   FITBASE_TEST_SMTP_CA_FILE  the PEM of the CA that signed the server's certificate
# The server stops by itself once the sourcing shell has exited (within a second); its pid is in
# $smtp_test_server_pid for an earlier `kill`. Everything lives in $smtp_test_dir, inside $work when the caller has
# one (.ci/run does, and removes it), else in $TMPDIR or /tmp.
# Needs python3 with venv, openssl, and PyPI. Sets no trap and leaves the shell's options as they were.

smtp_test_dir=$(mktemp -d "${work:-${TMPDIR:-/tmp}}/fitbase-smtp.XXXXXX")
smtp_test_script="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/smtp-test-server.py"

echo "SMTP test server: installing aiosmtpd into $smtp_test_dir/venv"
python3 -m venv "$smtp_test_dir/venv" || return 1
"$smtp_test_dir/venv/bin/pip" install --quiet --disable-pip-version-check aiosmtpd </dev/null || return 1

# A throw-away CA, and a certificate it signs for localhost and 127.0.0.1 (P-256, valid two days).
(
  cd "$smtp_test_dir" &&
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
      -subj "/CN=FitBase CI Mail CA" -keyout ca.key -out ca.pem \
      -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null &&
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
      -subj "/CN=localhost" -keyout server.key -out server.csr 2>/dev/null &&
    printf '%s\n' "subjectAltName=DNS:localhost,IP:127.0.0.1" "basicConstraints=critical,CA:FALSE" \
      "keyUsage=critical,digitalSignature" "extendedKeyUsage=serverAuth" >server.ext &&
    openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile server.ext \
      -out server.pem 2>/dev/null
) || { echo "SMTP test server: openssl could not make the certificates"; return 1; }

smtp_test_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
# Hex, so the password never starts with "-" (argparse would take it for an option) and needs no escaping in a URL.
smtp_test_password=$(python3 -c 'import secrets; print(secrets.token_hex(12))')
mkdir -p "$smtp_test_dir/maildir"
"$smtp_test_dir/venv/bin/python" "$smtp_test_script" --host 127.0.0.1 --port "$smtp_test_port" \
  --cert "$smtp_test_dir/server.pem" --key "$smtp_test_dir/server.key" --maildir "$smtp_test_dir/maildir" \
  --user=fitbase-ci --password="$smtp_test_password" --exit-with-pid $$ \
  </dev/null >"$smtp_test_dir/server.log" 2>&1 &
smtp_test_server_pid=$!

for _ in $(seq 1 60); do
  grep -q '^ready ' "$smtp_test_dir/server.log" 2>/dev/null && break
  kill -0 "$smtp_test_server_pid" 2>/dev/null || break
  sleep 0.5
done
if ! grep -q '^ready ' "$smtp_test_dir/server.log" 2>/dev/null; then
  echo "SMTP test server did not start:"
  cat "$smtp_test_dir/server.log"
  return 1
fi

export FITBASE_TEST_SMTP_URL="smtp://fitbase-ci:$smtp_test_password@localhost:$smtp_test_port"
export FITBASE_TEST_SMTP_MAILDIR="$smtp_test_dir/maildir"
export FITBASE_TEST_SMTP_CA_FILE="$smtp_test_dir/ca.pem"
echo "SMTP test server on 127.0.0.1:$smtp_test_port (pid $smtp_test_server_pid, files in $smtp_test_dir)"
