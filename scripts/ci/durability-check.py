#!/usr/bin/env python3
"""Kill -9 durability check for `fitbase serve`, on SQLite and PostgreSQL.

For each engine: start `fitbase serve` on a fresh SQLite data directory or a fresh PostgreSQL database, run a write
load from several client threads (sign-ups, workout logs, sync pushes of workout and cycle logs, health sample
uploads) against a few accounts, `kill -9` the server 3-6 s into the load while requests are in flight, run
`fitbase audit verify` on what the crash left, restart the server on the same data with the same master key and
check through the API that every acknowledged write is there:

* sign-ups: a password sign-in of every account succeeds, and the access token it got at sign-up still works;
* workout logs (`POST /v1/history`): each one is listed by `GET /v1/history`, same workout and duration;
* sync pushes (`POST /v1/sync/push`, `workoutLogs` and `cycleLogs` with ids the client chose): each record is in
  `GET /v1/sync/changes`, not deleted, with the data sent;
* health samples (`POST /v1/health/samples`): each one is listed by `GET /v1/health/samples` with the value sent
  (decrypted: the data keys and the master key survived too), and is in the sync feed.

"Acknowledged" means a 2xx answer read in full (and, for pushes and uploads, the mutation `applied` / the sample
`created`); a request whose answer never came (connection reset by the kill) is not acknowledged, and may or may not
have been applied. 429 and 503 answers are not acknowledged either; the load carries on. After the restart the
pushes and uploads the kill cut off are sent again as they were, as a device would (mutation ids answer their first
result, stored samples are `duplicate`), and what they answer is checked like the rest. The cycle runs twice per
engine by default (the second load on the restarted server, then a second kill), then the audit chain is verified
again after a clean stop. Exit status 1, naming every missing write, when anything acknowledged is not found or the
audit chain does not verify; 2 for a broken set-up.

    scripts/ci/durability-check.py [--bin PATH] [--engines sqlite,postgres] [--postgres-url URL] [--cycles N]

The binary is `--bin`, else `$FITBASE_BIN`, else `.build/debug/fitbase`. PostgreSQL runs when `--postgres-url` or
`$FITBASE_TEST_POSTGRES_URL` names a server where the user may create databases (a database `fitbase_durability_…`
is created for the run and dropped after; `psql` must be installed); without one only SQLite runs, unless
`--engines postgres` asks for it. Python 3 standard library only.
"""

import argparse
import base64
import http.client
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import urllib.parse
import uuid
from datetime import datetime, timedelta, timezone

KINDS = ("signups", "logs", "pushes", "samples")
SINGULAR = {"signups": "sign-up", "logs": "workout log", "pushes": "pushed record", "samples": "health sample"}
PASSWORD = "correct horse battery staple"


def log(message):
    print(message, flush=True)


class SetupError(Exception):
    """The check could not run (server did not start, database not reachable, unexpected answers)."""


def iso(instant):
    return instant.strftime("%Y-%m-%dT%H:%M:%SZ")


# MARK: HTTP


class Client:
    """One keep-alive HTTP connection; JSON in and out."""

    def __init__(self, base, timeout=20.0):
        parsed = urllib.parse.urlsplit(base)
        self.host, self.port = parsed.hostname, parsed.port
        self.timeout = timeout
        self.connection = None

    def request(self, method, path, body=None, token=None):
        """(status, parsed JSON or None, headers); raises OSError / HTTPException when no full answer came."""
        if self.connection is None:
            self.connection = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        headers = {"Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        if token:
            headers["Authorization"] = "Bearer " + token
        try:
            self.connection.request(method, path, body=data, headers=headers)
            response = self.connection.getresponse()
            raw = response.read()
        except BaseException:
            self.close()
            raise
        if response.getheader("Connection", "").lower() == "close":
            self.close()
        parsed = None
        if raw:
            try:
                parsed = json.loads(raw)
            except ValueError:
                parsed = {"_raw": raw[:200].decode(errors="replace")}
        return response.status, parsed, response

    def close(self):
        if self.connection is not None:
            self.connection.close()
            self.connection = None


def retrying(client, method, path, body=None, token=None, attempts=40):
    """A request outside the load, retried on 429 / 503 (honouring a short Retry-After)."""
    for _ in range(attempts):
        status, answer, response = client.request(method, path, body, token)
        if status not in (429, 503):
            return status, answer
        try:
            delay = min(float(response.getheader("Retry-After") or 0.2), 2.0)
        except ValueError:
            delay = 0.2
        time.sleep(max(delay, 0.05))
    return status, answer


# MARK: Engines


class Engine:
    """A database for the run and how to start `fitbase serve` and `fitbase audit verify` on it."""

    def __init__(self, name, binary, work, master_key, database_url=None, admin=None):
        self.name = name
        self.binary = binary
        self.work = work
        self.data_dir = os.path.join(work, "data")
        self.database_url = database_url
        self.admin = admin  # (psql argv prefix, env, database name) for PostgreSQL
        self.env = dict(os.environ)
        for key in list(self.env):
            if key.startswith("FITBASE_"):
                del self.env[key]
        self.env.update({
            "FITBASE_MASTER_KEY": master_key,
            # Tokens name the public URL as issuer: a fixed one keeps them valid across restarts on other ports.
            "FITBASE_PUBLIC_URL": "http://durability-check.invalid",
            "FITBASE_BCRYPT_COST": "4",
            "FITBASE_RATE_LIMITS": "off",
            "FITBASE_LOG_LEVEL": "notice",
        })
        if database_url:
            self.env["FITBASE_DATABASE_URL"] = database_url
        self.process = None
        self.starts = 0

    def start(self, timeout=40.0):
        """Starts `fitbase serve`; returns its URL once `/readyz` answers 200."""
        self.starts += 1
        out_path = os.path.join(self.work, f"serve-{self.starts}.out")
        self.err_path = os.path.join(self.work, f"serve-{self.starts}.err")
        with open(out_path, "wb") as out, open(self.err_path, "wb") as err:
            self.process = subprocess.Popen(
                [self.binary, "serve", "--port", "0", "--data-dir", self.data_dir],
                stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=self.env, start_new_session=True,
            )
        deadline = time.monotonic() + timeout
        url = None
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise SetupError(f"fitbase serve exited {self.process.returncode} on start {self.starts}:\n{self.tail()}")
            if url is None:
                with open(out_path, errors="replace") as out:
                    for line in out:
                        if "http://" in line:
                            url = "http://" + line.split("http://", 1)[1].split()[0]
                            break
            if url is not None:
                try:
                    client = Client(url, timeout=5)
                    status, _, _ = client.request("GET", "/readyz")
                    client.close()
                    if status == 200:
                        return url
                except (OSError, http.client.HTTPException):
                    pass
            time.sleep(0.05)
        raise SetupError(f"fitbase serve was not ready within {timeout:.0f} s (start {self.starts}):\n{self.tail()}")

    def kill9(self):
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait()
        self.process = None

    def stop(self):
        """SIGTERM, then SIGKILL after 10 s; the exit status."""
        if self.process is None:
            return None
        self.process.send_signal(signal.SIGTERM)
        try:
            code = self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            code = self.process.wait()
        self.process = None
        return code

    def tail(self, lines=15):
        try:
            with open(self.err_path, errors="replace") as err:
                return "".join(err.readlines()[-lines:])
        except OSError:
            return ""

    def audit_verify(self):
        """(exit code, output) of `fitbase audit verify` on the same configuration."""
        try:
            done = subprocess.run(
                [self.binary, "audit", "verify", "--data-dir", self.data_dir],
                env=self.env, stdin=subprocess.DEVNULL, capture_output=True, timeout=60,
            )
        except subprocess.TimeoutExpired:
            return 124, "timed out after 60 s"
        return done.returncode, (done.stdout + done.stderr).decode(errors="replace").strip()

    def cleanup(self):
        if self.process is not None:
            try:
                self.process.kill()
                self.process.wait()
            except OSError:
                pass
            self.process = None
        if self.admin:
            argv, env, database = self.admin
            for force in (" WITH (FORCE)", ""):  # FORCE needs PostgreSQL 13
                done = subprocess.run(argv + ["-c", f'DROP DATABASE IF EXISTS "{database}"{force}'],
                                      env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=30)
                if done.returncode == 0:
                    break
            else:
                log(f"{self.name}: could not drop database {database}: {done.stderr.decode(errors='replace').strip()}")


def find_psql():
    found = shutil.which("psql")
    if found:
        return found
    candidates = sorted(
        (os.path.join("/usr/lib/postgresql", v, "bin", "psql") for v in os.listdir("/usr/lib/postgresql")),
        key=lambda p: [int(x) if x.isdigit() else 0 for x in p.split("/")[4].split(".")],
    ) if os.path.isdir("/usr/lib/postgresql") else []
    for candidate in reversed(candidates):
        if os.path.exists(candidate):
            return candidate
    raise SetupError("psql not found: it creates and drops the PostgreSQL database of the run")


def postgres_database(server_url):
    """Creates a fresh database on the server `server_url` names: (its URL, admin tuple for dropping it)."""
    parsed = urllib.parse.urlsplit(server_url)
    if parsed.scheme not in ("postgres", "postgresql"):
        raise SetupError(f"not a postgres:// URL: {server_url}")
    name = f"fitbase_durability_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    env = dict(os.environ)
    if parsed.password:
        env["PGPASSWORD"] = urllib.parse.unquote(parsed.password)
    query = urllib.parse.parse_qs(parsed.query)
    mode = (query.get("sslmode") or query.get("tlsmode") or [""])[0]
    if mode:
        env["PGSSLMODE"] = mode
    argv = [find_psql(), "-X", "-q", "-v", "ON_ERROR_STOP=1",
            "-h", parsed.hostname or "127.0.0.1", "-p", str(parsed.port or 5432),
            "-U", urllib.parse.unquote(parsed.username or "postgres"),
            "-d", (parsed.path.lstrip("/") or "postgres")]
    done = subprocess.run(argv + ["-c", f'CREATE DATABASE "{name}"'], env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, timeout=30)
    if done.returncode != 0:
        raise SetupError(f"cannot create database {name}: {done.stderr.decode(errors='replace').strip()}")
    url = urllib.parse.urlunsplit((parsed.scheme, parsed.netloc, "/" + name, parsed.query, ""))
    return url, (argv, env, name)


# MARK: The load


class Account:
    def __init__(self, email, session):
        self.email = email
        self.id = session["user"]["id"]
        self.token = session["accessToken"]
        self.device_token = session.get("deviceToken")
        self.lock = threading.Lock()
        self.cycle_days_back = 0  # cycle logs start on distinct days, going back from today

    def next_cycle_start(self):
        with self.lock:
            self.cycle_days_back += 1
            back = self.cycle_days_back
        return (datetime.now(timezone.utc) - timedelta(days=back + 1)).strftime("%Y-%m-%d")


class Ledger:
    """Everything acknowledged, and what the load saw."""

    def __init__(self):
        self.lock = threading.Lock()
        self.signups = []   # Account
        self.logs = []      # (account, id, workoutId, duration)
        self.pushes = []    # (account, collection, id, expected data subset)
        self.samples = []   # (account, id, type, value)
        self.unanswered = {k: 0 for k in KINDS}
        self.unsent = []    # (kind, account, body, expected) of pushes and uploads whose answer the kill cut off
        self.statuses = {}  # (kind, status or problem code) -> count, for everything not acknowledged
        self.in_flight = 0

    def count(self):
        return {"signups": len(self.signups), "logs": len(self.logs), "pushes": len(self.pushes),
                "samples": len(self.samples)}

    def note(self, kind, what):
        with self.lock:
            self.statuses[(kind, what)] = self.statuses.get((kind, what), 0) + 1


class Load:
    SAMPLES_PER_UPLOAD = 20
    MUTATIONS_PER_PUSH = 6
    WEIGHTS = (("signups", 1), ("logs", 5), ("pushes", 2), ("samples", 2))

    def __init__(self, url, accounts, workouts, ledger, run_tag, rng_seed):
        self.url = url
        self.accounts = accounts
        self.workouts = workouts
        self.ledger = ledger
        self.run_tag = run_tag
        self.stop = threading.Event()
        self.rng_seed = rng_seed
        self.signup_counter = 0
        self.counter_lock = threading.Lock()

    def worker(self, index):
        rng = random.Random(self.rng_seed * 1000 + index)
        client = Client(self.url)
        kinds = [k for k, w in self.WEIGHTS for _ in range(w)]
        while not self.stop.is_set():
            kind = rng.choice(kinds)
            account = self.accounts[index % len(self.accounts)] if rng.random() < 0.7 else rng.choice(self.accounts)
            with self.ledger.lock:
                self.ledger.in_flight += 1
            try:
                getattr(self, "do_" + kind)(client, account, rng)
            except (OSError, http.client.HTTPException):
                with self.ledger.lock:
                    self.ledger.unanswered[kind] += 1
                if self.stop.wait(0.02):
                    break
            except Exception as error:  # an answer of an unexpected shape: reported, never acknowledged
                self.ledger.note(kind, f"error {type(error).__name__}: {error}")
            finally:
                with self.ledger.lock:
                    self.ledger.in_flight -= 1
        client.close()

    def refused(self, kind, status, answer):
        code = (answer or {}).get("code", "") if isinstance(answer, dict) else ""
        self.ledger.note(kind, f"{status} {code}".strip())
        if status in (429, 503):
            time.sleep(0.05)

    def do_signups(self, client, account, rng):
        with self.counter_lock:
            self.signup_counter += 1
            n = self.signup_counter
        email = f"load-{self.run_tag}-{n}@durability.example.com"
        # A sign-up opens no session (it answers 202 alike for every address); the app signs in next.
        status, answer, _ = client.request("POST", "/v1/auth/signup", {"email": email, "password": PASSWORD})
        if status == 202:
            status, answer, _ = client.request("POST", "/v1/auth/signin", {"email": email, "password": PASSWORD})
        if status == 200:
            with self.ledger.lock:
                self.ledger.signups.append(Account(email, answer))
        else:
            self.refused("signups", status, answer)

    def do_logs(self, client, account, rng):
        workout = rng.choice(self.workouts)
        duration = rng.randint(1, 600)
        completed = datetime.now(timezone.utc) - timedelta(minutes=rng.randint(1, 60 * 24 * 20))
        body = {"workoutId": workout, "completedAt": iso(completed), "duration": duration, "rating": rng.randint(1, 5)}
        status, answer, _ = client.request("POST", "/v1/history", body, account.token)
        if status == 201 and answer and answer.get("id"):
            with self.ledger.lock:
                self.ledger.logs.append((account, answer["id"], workout, duration))
        else:
            self.refused("logs", status, answer)

    def do_pushes(self, client, account, rng):
        now = datetime.now(timezone.utc)
        mutations, expected = [], {}
        for _ in range(self.MUTATIONS_PER_PUSH):
            record = str(uuid.uuid4())
            if rng.random() < 0.5:
                data = {"startDate": account.next_cycle_start(), "notes": "d" + record[:8]}
                mutations.append({"mutationId": str(uuid.uuid4()), "collection": "cycleLogs", "id": record,
                                  "op": "upsert", "updatedAt": iso(now), "data": data})
                expected[mutations[-1]["mutationId"]] = ("cycleLogs", record, {"startDate": data["startDate"], "notes": data["notes"]})
            else:
                duration = rng.randint(1, 600)
                data = {"workoutId": rng.choice(self.workouts), "duration": duration,
                        "completedAt": iso(now - timedelta(minutes=rng.randint(1, 60 * 24 * 20)))}
                mutations.append({"mutationId": str(uuid.uuid4()), "collection": "workoutLogs", "id": record,
                                  "op": "upsert", "updatedAt": iso(now), "data": data})
                expected[mutations[-1]["mutationId"]] = ("workoutLogs", record, {"workoutId": data["workoutId"], "duration": duration})
        status, answer = self.send(client, "pushes", account, "/v1/sync/push", {"mutations": mutations}, expected)
        self.acknowledge_push(account, status, answer, expected)

    def send(self, client, kind, account, path, body, expected):
        """A push or an upload; one whose answer never came is kept to be sent again after the restart."""
        try:
            status, answer, _ = client.request("POST", path, body, account.token)
        except (OSError, http.client.HTTPException):
            with self.ledger.lock:
                self.ledger.unsent.append((kind, account, body, expected))
            raise
        return status, answer

    def acknowledge_push(self, account, status, answer, expected):
        if status != 200:
            self.refused("pushes", status, answer)
            return
        acknowledged = []
        for result in answer.get("results", []):
            if result.get("status") == "applied" and result.get("mutationId") in expected:
                collection, record, data = expected[result["mutationId"]]
                acknowledged.append((account, collection, record, data))
            else:
                problem = (result.get("problem") or {}).get("code", "")
                self.ledger.note("pushes", f"mutation {result.get('status')} {problem}".strip())
        with self.ledger.lock:
            self.ledger.pushes.extend(acknowledged)

    def do_samples(self, client, account, rng):
        now = datetime.now(timezone.utc)
        samples, sent = [], {}
        for _ in range(self.SAMPLES_PER_UPLOAD):
            sample_id = str(uuid.uuid4()).upper()
            start = now - timedelta(seconds=rng.randint(60, 86400 * 30))
            kind = rng.random()
            if kind < 0.6:
                value = rng.randint(40, 180)
                sample = {"id": sample_id, "type": "heartRate", "value": value, "unit": "count/min"}
            elif kind < 0.85:
                value = rng.randint(1, 5000)
                sample = {"id": sample_id, "type": "steps", "value": value, "unit": "count",
                          "end": iso(start + timedelta(minutes=10))}
            else:
                value = rng.randint(90, 100)
                sample = {"id": sample_id, "type": "oxygenSaturation", "value": value, "unit": "%"}
            sample.update({"start": iso(start), "sourceId": "com.example.durability", "device": "check"})
            samples.append(sample)
            sent[sample_id.lower()] = (sample["type"], value)
        status, answer = self.send(client, "samples", account, "/v1/health/samples", {"samples": samples}, sent)
        self.acknowledge_upload(account, status, answer, sent)

    def acknowledge_upload(self, account, status, answer, sent, accepted=("created",)):
        if status != 200:
            self.refused("samples", status, answer)
            return 0
        acknowledged = []
        duplicates = 0
        for result in answer.get("results", []):
            sample_id = str(result.get("id", "")).lower()
            duplicates += result.get("status") == "duplicate"
            if result.get("status") in accepted and sample_id in sent:
                kind, value = sent[sample_id]
                acknowledged.append((account, sample_id, kind, value))
            else:
                problem = (result.get("problem") or {}).get("code", "")
                self.ledger.note("samples", f"sample {result.get('status')} {problem}".strip())
        with self.ledger.lock:
            self.ledger.samples.extend(acknowledged)
        return duplicates


def prepare(url, count, run_tag, ledger):
    """Signs up the load's accounts (acknowledged sign-ups too), gives them the health consent; the workout ids."""
    client = Client(url)
    accounts = []
    for n in range(count):
        email = f"base-{run_tag}-{n}@durability.example.com"
        status, answer = retrying(client, "POST", "/v1/auth/signup", {"email": email, "password": PASSWORD})
        if status != 202:
            raise SetupError(f"sign-up of {email} answered {status}: {answer}")
        status, answer = retrying(client, "POST", "/v1/auth/signin", {"email": email, "password": PASSWORD})
        if status != 200:
            raise SetupError(f"sign-in after the sign-up of {email} answered {status}: {answer}")
        account = Account(email, answer)
        status, answer = retrying(client, "POST", "/v1/me/consents",
                                  {"kind": "healthData", "version": "2026-01", "granted": True}, account.token)
        if status != 201:
            raise SetupError(f"healthData consent answered {status}: {answer}")
        accounts.append(account)
        ledger.signups.append(account)
    status, answer = retrying(client, "GET", "/v1/workouts?premium=false&limit=100")
    workouts = [w["id"] for w in (answer or {}).get("items", [])] if status == 200 else []
    if not workouts:
        raise SetupError(f"GET /v1/workouts answered {status} with no workouts (is the demo catalog loaded?)")
    client.close()
    return accounts, workouts


def run_load(engine, url, accounts, workouts, ledger, run_tag, threads, rng):
    """The load until a kill -9 3-6 s in; (seconds, requests in flight at the kill, the load)."""
    load = Load(url, accounts, workouts, ledger, run_tag, rng.randrange(1 << 30))
    workers = [threading.Thread(target=load.worker, args=(i,), daemon=True) for i in range(threads)]
    started = time.monotonic()
    for worker in workers:
        worker.start()
    time.sleep(rng.uniform(3.0, 6.0))
    with ledger.lock:
        in_flight = ledger.in_flight
    engine.kill9()
    elapsed = time.monotonic() - started
    load.stop.set()
    for worker in workers:
        worker.join(timeout=30)
        if worker.is_alive():
            raise SetupError("a load thread did not stop within 30 s of the kill")
    return elapsed, in_flight, load


# MARK: Checking


def pages(client, path, token, key, limit=100):
    """Every item of a paged list endpoint."""
    items, cursor = [], None
    while True:
        query = f"limit={limit}" + (f"&cursor={urllib.parse.quote(cursor)}" if cursor else "")
        status, answer = retrying(client, "GET", f"{path}{'&' if '?' in path else '?'}{query}", token=token)
        if status != 200:
            raise SetupError(f"GET {path} answered {status}: {answer}")
        items.extend(answer.get(key, []))
        cursor = answer.get("nextCursor")
        if not cursor:
            return items


def feed(client, token):
    """The account's sync feed: {(collection, id): change}."""
    changes, since = {}, None
    while True:
        path = "/v1/sync/changes?limit=1000" + (f"&since={urllib.parse.quote(since)}" if since else "")
        status, answer = retrying(client, "GET", path, token=token)
        if status != 200:
            raise SetupError(f"GET /v1/sync/changes answered {status}: {answer}")
        for change in answer.get("changes", []):
            changes[(change["collection"], change["id"])] = change
        since = answer.get("cursor")
        if not answer.get("hasMore"):
            return changes


def resend(url, ledger, load):
    """Sends again, as they were, the pushes and uploads whose answers the kill cut off, as a device would: a push's
    mutation ids answer their first result (or apply now), a sample already stored is a `duplicate`. What they answer
    is acknowledged and checked like the rest. (pushes resent, uploads resent, samples that were stored already)."""
    client = Client(url)
    with ledger.lock:
        unsent, ledger.unsent = ledger.unsent, []
    pushes = uploads = landed = 0
    for kind, account, body, expected in unsent:
        path = "/v1/sync/push" if kind == "pushes" else "/v1/health/samples"
        status, answer = retrying(client, "POST", path, body, account.token)
        if kind == "pushes":
            pushes += 1
            load.acknowledge_push(account, status, answer, expected)
        else:
            uploads += 1
            landed += load.acknowledge_upload(account, status, answer, expected, accepted=("created", "duplicate"))
    client.close()
    return pushes, uploads, landed


def check(url, ledger, accounts):
    """What acknowledged writes are missing: {kind: [description]}, and {kind: found}."""
    missing = {k: [] for k in KINDS}
    found = {k: 0 for k in KINDS}
    lock = threading.Lock()
    errors = []

    def miss(kind, what):
        with lock:
            missing[kind].append(what)

    def hit(kind, n=1):
        with lock:
            found[kind] += n

    # Sign-ups: a password sign-in (with the device token, which has its own attempt allowance), and the token the
    # sign-in after the sign-up answered still names a live session of that account.
    signups = list(ledger.signups)

    def check_signups(part):
        client = Client(url)
        for account in part:
            body = {"email": account.email, "password": PASSWORD}
            if account.device_token:
                body["deviceToken"] = account.device_token
            status, answer = retrying(client, "POST", "/v1/auth/signin", body)
            if status != 200 or answer.get("user", {}).get("id") != account.id:
                miss("signups", f"{account.email} (user {account.id}): sign-in answered {status} "
                                f"{(answer or {}).get('code', '')}")
                continue
            status, answer = retrying(client, "GET", "/v1/me", token=account.token)
            if status != 200 or answer.get("id") != account.id:
                miss("signups", f"{account.email} (user {account.id}): its sign-up token answered {status} "
                                f"{(answer or {}).get('code', '')} on GET /v1/me")
                continue
            hit("signups")
        client.close()

    # Logs, pushes, samples: per load account, the list endpoints and the sync feed.
    def check_account(account):
        client = Client(url)
        logs = {item["id"]: item for item in pages(client, "/v1/history", account.token, "items")}
        samples = {item["id"].lower(): item for item in pages(client, "/v1/health/samples", account.token, "items")}
        changes = feed(client, account.token)
        client.close()
        for owner, log_id, workout, duration in ledger.logs:
            if owner is not account:
                continue
            item = logs.get(log_id)
            if item is None:
                miss("logs", f"workout log {log_id} of {account.email} not in GET /v1/history")
            elif item.get("workoutId") != workout or item.get("duration") != duration:
                miss("logs", f"workout log {log_id} of {account.email} changed: {item}")
            elif ("workoutLogs", log_id) not in changes:
                miss("logs", f"workout log {log_id} of {account.email} listed but not in the sync feed")
            else:
                hit("logs")
        for owner, collection, record, data in ledger.pushes:
            if owner is not account:
                continue
            change = changes.get((collection, record))
            if change is None or change.get("deleted"):
                miss("pushes", f"pushed {collection} {record} of {account.email} not in GET /v1/sync/changes"
                               + (" (a tombstone)" if change else ""))
            elif any(change.get("data", {}).get(k) != v for k, v in data.items()):
                miss("pushes", f"pushed {collection} {record} of {account.email} changed: {change.get('data')}")
            else:
                hit("pushes")
        for owner, sample_id, kind, value in ledger.samples:
            if owner is not account:
                continue
            item = samples.get(sample_id)
            if item is None:
                miss("samples", f"health sample {sample_id} of {account.email} not in GET /v1/health/samples")
            elif item.get("type") != kind or item.get("value") != value:
                miss("samples", f"health sample {sample_id} of {account.email} changed: {item}")
            elif not any(("healthSamples", i) in changes for i in (sample_id, sample_id.upper())):
                miss("samples", f"health sample {sample_id} of {account.email} listed but not in the sync feed")
            else:
                hit("samples")

    def guarded(function, *args):
        try:
            function(*args)
        except (OSError, http.client.HTTPException, SetupError) as error:
            with lock:
                errors.append(f"{type(error).__name__}: {error}")

    threads = [threading.Thread(target=guarded, args=(check_signups, signups[i::4])) for i in range(4)]
    threads += [threading.Thread(target=guarded, args=(check_account, a)) for a in accounts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise SetupError("checking after the restart failed: " + "; ".join(errors[:5]))
    return missing, found


def figures(counts):
    return " ".join(f"{k}={counts[k]}" for k in KINDS)


def run_engine(name, binary, work, master_key, args, rng, database_url=None, admin=None):
    """One engine's cycles; a list of failure messages (empty when every acknowledged write was found)."""
    engine = Engine(name, binary, work, master_key, database_url, admin)
    failures = []
    try:
        begun = time.monotonic()
        url = engine.start()
        ledger = Ledger()
        run_tag = uuid.uuid4().hex[:8]
        accounts, workouts = prepare(url, args.accounts, run_tag, ledger)
        for cycle in range(1, args.cycles + 1):
            before = ledger.count()
            seconds, in_flight, load = run_load(engine, url, accounts, workouts, ledger, f"{run_tag}-{cycle}", args.threads, rng)
            added = {k: ledger.count()[k] - before[k] for k in KINDS}
            code, output = engine.audit_verify()
            chain = "audit chain intact" if code == 0 else f"AUDIT VERIFY EXITED {code}"
            if code != 0:
                failures.append(f"{name}: `fitbase audit verify` after kill {cycle} exited {code}: {output}")
            restart = time.monotonic()
            url = engine.start()
            restart = time.monotonic() - restart
            pushes, uploads, landed = resend(url, ledger, load)
            missing, found = check(url, ledger, accounts)
            lost = sum(len(v) for v in missing.values())
            log(f"{name} cycle {cycle}: kill -9 at {seconds:.1f} s with {in_flight} requests in flight; "
                f"acknowledged {figures(added)}; {chain} after the kill; restarted in {restart:.1f} s; "
                f"resent {pushes} pushes and {uploads} uploads the kill cut off ({landed} of their samples "
                f"had been stored); found {figures(found)} of {figures(ledger.count())}"
                + ("" if lost == 0 else f"; {lost} MISSING"))
            for kind in KINDS:
                for what in missing[kind]:
                    failures.append(f"{name} cycle {cycle}: acknowledged {SINGULAR[kind]} missing: {what}")
            if lost:
                break
        stopped = engine.stop()
        code, output = engine.audit_verify()  # the reads after the restart were audited too
        if code != 0:
            failures.append(f"{name}: `fitbase audit verify` after the last restart exited {code}: {output}")
        if stopped not in (0, None):
            log(f"{name}: note: fitbase serve exited {stopped} on SIGTERM")
        totals = ledger.count()
        for kind in KINDS:
            if totals[kind] == 0:
                failures.append(f"{name}: the load got no {kind} acknowledged (see the answers below)")
        refused = ", ".join(f"{k} {s}: {n}" for (k, s), n in sorted(ledger.statuses.items()))
        if refused:
            log(f"{name}: not acknowledged (answers): {refused}")
        for (kind, status), n in sorted(ledger.statuses.items()):
            if not (status.startswith("429") or status.startswith("503")):
                failures.append(f"{name}: unexpected answer to {kind}: {status} ({n} times)")
        unanswered = ", ".join(f"{k}={v}" for k, v in ledger.unanswered.items())
        verdict = "found all" if not any("missing" in f for f in failures) else "SOME MISSING"
        chain = "audit chain intact" if code == 0 else "AUDIT CHAIN NOT VERIFIED"
        log(f"{name}: acknowledged {figures(totals)}; {verdict}; {chain} "
            f"({args.cycles} kill -9 cycles, unanswered at the kills: {unanswered}; {time.monotonic() - begun:.1f} s)")
    except SetupError as error:
        failures.append(f"{name}: {error}")
        if engine.process is not None:
            failures.append(f"{name}: server log tail:\n{engine.tail()}")
    except Exception as error:
        failures.append(f"{name}: the check broke: {type(error).__name__}: {error}\n{traceback.format_exc()}")
    finally:
        engine.cleanup()
    return failures


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", default=os.environ.get("FITBASE_BIN", ".build/debug/fitbase"), help="the fitbase binary")
    parser.add_argument("--engines", default=None, help="comma list of sqlite, postgres (default: sqlite, and postgres when a URL is given)")
    parser.add_argument("--postgres-url", default=os.environ.get("FITBASE_TEST_POSTGRES_URL"),
                        help="a PostgreSQL server where the user may create databases (default $FITBASE_TEST_POSTGRES_URL)")
    parser.add_argument("--cycles", type=int, default=2, help="kill -9 cycles per engine (default 2)")
    parser.add_argument("--threads", type=int, default=8, help="client threads (default 8)")
    parser.add_argument("--accounts", type=int, default=4, help="accounts the load writes to (default 4)")
    parser.add_argument("--seed", type=int, default=None, help="random seed (default: random, printed)")
    parser.add_argument("--keep", action="store_true", help="keep the work directory (server logs, SQLite files)")
    args = parser.parse_args()

    binary = os.path.abspath(args.bin)
    if not os.access(binary, os.X_OK):
        log(f"durability-check: no executable fitbase binary at {binary} (--bin or FITBASE_BIN)")
        return 2
    engines = args.engines.split(",") if args.engines else (["sqlite", "postgres"] if args.postgres_url else ["sqlite"])
    for name in engines:
        if name not in ("sqlite", "postgres"):
            log(f"durability-check: unknown engine {name!r}")
            return 2
    if "postgres" in engines and not args.postgres_url:
        log("durability-check: postgres needs --postgres-url or FITBASE_TEST_POSTGRES_URL")
        return 2
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    log(f"durability-check: {binary}, engines {', '.join(engines)}, {args.cycles} kill -9 cycles each, "
        f"{args.threads} threads on {args.accounts} accounts, seed {seed}")
    if "sqlite" not in engines or "postgres" not in engines:
        log("durability-check: note: " + ("PostgreSQL skipped (no FITBASE_TEST_POSTGRES_URL)" if "postgres" not in engines else "SQLite skipped"))

    # `timeout` sends SIGTERM: unwind, so that the servers are killed and the database dropped on the way out.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    work = tempfile.mkdtemp(prefix="fitbase-durability.")
    master_key = base64.b64encode(os.urandom(32)).decode()
    failures = []
    started = time.monotonic()
    try:
        for name in engines:
            engine_work = os.path.join(work, name)
            os.makedirs(engine_work)
            if name == "sqlite":
                failures += run_engine(name, binary, engine_work, master_key, args, rng)
            else:
                try:
                    url, admin = postgres_database(args.postgres_url)
                except (SetupError, OSError, subprocess.TimeoutExpired) as error:
                    failures.append(f"postgres: {error}")
                    continue
                failures += run_engine(name, binary, engine_work, master_key, args, rng, url, admin)
    finally:
        if args.keep:
            log(f"durability-check: work directory kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    if failures:
        log(f"durability-check FAILED ({len(failures)} problems, {time.monotonic() - started:.1f} s, seed {seed}):")
        for failure in failures[:200]:
            log("  " + failure)
        if len(failures) > 200:
            log(f"  … and {len(failures) - 200} more")
        return 1
    log(f"durability-check passed in {time.monotonic() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
