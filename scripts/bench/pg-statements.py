#!/usr/bin/env python3
"""The statements FitBase sends PostgreSQL for each request the benchmarks make most, one request at a time, read
from PostgreSQL's own log: the statement-by-statement measure of "fewer round trips per request".

    FITBASE_BIN=… FITBASE_DATABASE_URL=postgres://… PG_LOG=/path/to/server.log scripts/bench/pg-statements.py

A fresh database (pg_statements_<pid>_<random>, created through psql and dropped after) gets `log_statement = all`
(the URL's user must be allowed to ALTER DATABASE … SET; a superuser is), and one `fitbase serve` on it (rate limits
off, bcrypt cost 4). PG_LOG is the file the server writes its log to (`pg_ctl -l FILE`, or the file of its
logging collector); every line is read there. After a warm-up of each request (a user's first write creates rows a
later one only updates), each request is sent alone, in a quiet moment, and the statements logged meanwhile by the
run database's backends are printed in order, with their count and the transactions among them:

  create   POST /v1/history                  a workout log
  mine     GET /v1/history?limit=20          the user's newest logs
  get      GET /v1/workouts/{id}             one catalog workout
  signin   POST /v1/auth/signin              a password sign-in
  push     POST /v1/sync/push                one workoutLogs upsert

Statements of the instance's own background work that fall in a window (an outbox claim, the event hub reading the
events a request's commit announced) are printed too, marked `(background)` when they are known periodic ones.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchpg  # noqa: E402

FITBASE = os.environ["FITBASE_BIN"]
DATABASE_URL = os.environ.get("FITBASE_DATABASE_URL", "")
LOG = os.environ.get("PG_LOG", "")
PASSWORD = "benchmark password"
BACKGROUND = ("UPDATE outbox SET claimed_until",)

work = tempfile.mkdtemp(prefix="fitbase-pg-statements.")


def call(method, url, body=None, token=None):
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = "Bearer " + token
    data = json.dumps(body).encode() if body is not None else None
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data, headers, method=method), timeout=30) as answer:
            text = answer.read()
            return answer.status, json.loads(text) if text else None
    except urllib.error.HTTPError as error:
        return error.code, error.read()[:300]


def expect(what, answer, statuses=(200, 201)):
    status, body = answer
    if status not in statuses:
        raise SystemExit(f"{what}: {status} {str(body)[:300]}")
    return body


def logged_since(offset, pids):
    """The statements the log gained after OFFSET from backends PIDS: [(pid, text)]."""
    with open(LOG, errors="replace") as log:
        log.seek(offset)
        text = log.read()
    statements = []
    for match in re.finditer(r"\[(\d+)\][^\n]*?LOG:\s+(?:statement|execute [^:]*):\s*(.*?)(?=\n\S|\Z)", text, re.S):
        pid = int(match.group(1))
        if pid in pids:
            statements.append((pid, " ".join(match.group(2).split())))
    return statements


def main():
    if not DATABASE_URL.startswith(("postgres://", "postgresql://")):
        raise SystemExit("FITBASE_DATABASE_URL=postgres://… is needed")
    if not LOG or not os.path.isfile(LOG):
        raise SystemExit("PG_LOG=FILE is needed: the file the PostgreSQL server writes its log to")
    server = benchpg.PostgresServer(DATABASE_URL)
    with server.fresh_database("pg_statements") as database:
        server.query(f'ALTER DATABASE "{database}" SET log_statement = \'all\'')
        port = free_port()
        env = dict(os.environ, FITBASE_DATABASE_URL=server.url(database), FITBASE_RATE_LIMITS="off", FITBASE_LOG_LEVEL="warning",
                   FITBASE_BCRYPT_COST="4")
        serve = subprocess.Popen([FITBASE, "serve", "--port", str(port), "--data-dir", os.path.join(work, "data")], env=env,
                                 stdout=open(os.path.join(work, "serve.out"), "w"), stderr=open(os.path.join(work, "serve.err"), "w"))
        try:
            url = f"http://127.0.0.1:{port}"
            for _ in range(600):
                try:
                    urllib.request.urlopen(url + "/healthz", timeout=1)
                    break
                except Exception:
                    time.sleep(0.1)
            email = f"statements-{uuid.uuid4().hex[:8]}@bench.example"
            expect("sign-up", call("POST", url + "/v1/auth/signup", {"email": email, "password": PASSWORD}), (202,))
            token = expect("sign-in", call("POST", url + "/v1/auth/signin", {"email": email, "password": PASSWORD}))["accessToken"]
            workout = expect("catalog", call("GET", url + "/v1/workouts?limit=1"))["items"][0]["id"]
            n = [0]

            def log_body():
                n[0] += 1
                completed = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 3600 - n[0]))
                return {"workoutId": workout, "completedAt": completed, "duration": 30, "rating": 4}

            def push_body():
                return {"mutations": [{"mutationId": str(uuid.uuid4()), "collection": "workoutLogs", "id": str(uuid.uuid4()),
                                       "op": "upsert", "updatedAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                                       "data": log_body()}]}

            requests = [
                ("create", lambda: call("POST", url + "/v1/history", log_body(), token)),
                ("mine", lambda: call("GET", url + "/v1/history?limit=20", None, token)),
                ("get", lambda: call("GET", url + "/v1/workouts/" + workout)),
                ("signin", lambda: call("POST", url + "/v1/auth/signin", {"email": email, "password": PASSWORD})),
                ("push", lambda: call("POST", url + "/v1/sync/push", push_body(), token)),
            ]
            for name, send in requests:  # warm-up: first rows made, caches filled
                expect(name + " (warm-up)", send())
            time.sleep(1)
            print(f"FitBase on PostgreSQL {server.version().split(' ')[0]}: the statements of one request each "
                  f"(after a warm-up), from the server's log")
            for name, send in requests:
                time.sleep(0.5)
                offset = os.path.getsize(LOG)
                expect(name, send())
                time.sleep(0.5)
                pids = {int(p) for p in server.query(
                    f"SELECT pid FROM pg_stat_activity WHERE datname = '{database}' AND pid <> pg_backend_pid()").split()}
                statements = logged_since(offset, pids)
                ours = [s for _, s in statements if not s.startswith(BACKGROUND)]
                transactions = sum(1 for s in ours if s.upper().startswith("BEGIN"))
                print(f"\n{name}: {len(ours)} statements, {transactions} transaction{'s' if transactions != 1 else ''}")
                for pid, text in statements:
                    mark = " (background)" if text.startswith(BACKGROUND) else ""
                    print(f"  [{pid}] {text[:150]}{'…' if len(text) > 150 else ''}{mark}")
        finally:
            serve.terminate()
            serve.wait(15)
    return 0


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


if __name__ == "__main__":
    try:
        status = main()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    sys.exit(status)
