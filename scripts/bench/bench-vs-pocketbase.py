#!/usr/bin/env python3
"""FitBase and PocketBase side by side: the same six tests on both, in one run, on the same data, on loopback
(see scripts/bench/bench-vs-pocketbase.sh, which installs PocketBase and wrk and builds the binaries).

    FITBASE_BIN=… POCKETBASE_BIN=… [BARE_HELLO_BIN=…] [FITBASE_DATABASE_URL=postgres://…] \
        bench-vs-pocketbase.py [SECONDS] [CONNECTIONS]

FitBase serves from SQLite in a temp data dir, or, with FITBASE_DATABASE_URL=postgres://…, from PostgreSQL: a fresh
database created on that URL's server for the run (bench_vs_pb_<pid>_<random>, through psql) and dropped at the end;
`fitbase seed` and `fitbase serve` are both pointed at it. PocketBase is the same in both modes (its own SQLite).

Both servers hold the same 1,000-workout catalog (a seeded generator, fixed ids: the same as the team's reference
script, so figures from either are comparable). FitBase is seeded with `fitbase seed --catalog FILE --data-dir DIR`
and serves with FITBASE_LOG_LEVEL=warning (no request log), FITBASE_BCRYPT_COST=10 and no demo catalog. PocketBase
gets a `workouts` collection (public list and view, an index on type and durationMinutes) and a `history`
collection (owner-only rules, a relation to users and workouts, an index on (user, completedAt)), request logs off
(logs.maxDays 0); its password hashes are bcrypt at cost 10, its default. Each test runs
`wrk -t2 -cCONNECTIONS -dSECONDSs --latency`, FitBase then PocketBase, after a one-second pause:

  hello   GET /healthz                          | GET /api/health
  get     GET /v1/workouts/{id}                 | GET /api/collections/workouts/records/{id}
  list    GET /v1/workouts?type=strength&minDuration=30&sort=longest&limit=20
                                                | filter type="strength" && durationMinutes>=30,
                                                  sort -durationMinutes, perPage 20, skipTotal 1
  create  POST /v1/history (bearer token)       | POST /api/collections/history/records (auth token)
  mine    GET /v1/history?limit=20 (bearer)     | GET /api/collections/history/records?perPage=20&sort=-completedAt
                                                  &skipTotal=1 (auth token)
  signin  POST /v1/auth/signin, 4 connections   | POST /api/collections/users/auth-with-password, 4 connections

The create and mine tests are the team's reference script's: each created log completes a second before the one
before it in its wrk thread (distinct times, as in life), and mine runs right after create, so each server's user
holds the rows its own create test wrote. With BARE_HELLO_BIN set, right after hello, the same wrk run against a
bare Hummingbird server (Benchmarks/BareHello: one GET /healthz route, no middleware) shows what FitBase's own layers
cost on its cheapest route; without it that row is left out.

Prints a markdown table: req/s, p50 and p99 latency, the server's CPU (cores busy) and peak RSS during the run, for
both, and the FitBase/PocketBase ratio of req/s; its header names FitBase's engine. Then idle RSS (after start-up
and seeding) of each server and /healthz as a percentage of bare Hummingbird. Exits 1 when wrk saw a non-2xx response
or a socket error in any run (the run's figures are flagged in the table). BENCH_JSON=FILE also writes every figure
as JSON: {duration, connections, engine, idleRSS, results: {test: {fitbase: {rps, p50, p99, cpu, peak, non2xx,
errors, wrk}, pocketbase: {…}}, bare-hello: {bare: {…}}}} (the results keep the reference script's shape).

BENCH_ACCOUNTS=N (default 1, the reference script's one user) signs N users up on both servers; create and mine then
take them in turn, request after request, in each wrk thread (on PocketBase each create names its token's user), so
the requests in flight belong to different users, as an app's do. Sign-in keeps the first user.
"""
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid

import benchpg

FITBASE = os.environ["FITBASE_BIN"]
POCKETBASE = os.environ["POCKETBASE_BIN"]
BARE_HELLO = os.environ.get("BARE_HELLO_BIN") or None
DATABASE_URL = os.environ.get("FITBASE_DATABASE_URL") or None
duration = int(sys.argv[1]) if len(sys.argv) > 1 else 10
connections = int(sys.argv[2]) if len(sys.argv) > 2 else 32
SIGNIN_CONNECTIONS = 4
WORKOUTS = 1000
EMAIL, PASSWORD = "alice@bench.example", "AlicePass123!"
ACCOUNTS = int(os.environ.get("BENCH_ACCOUNTS") or 1)
ADMIN_EMAIL, ADMIN_PASSWORD = "admin@example.com", "AdminPass123!"

work = tempfile.mkdtemp(prefix="fitbase-vs-pb.")


# ---- the catalog both servers hold ----

def catalog():
    """The reference script's 1,000 workouts: same seed, same draws in the same order, so the same records."""
    rng = random.Random(20261122)
    types = ["strength", "hiitStrength", "pilates", "powerPilates", "walkingPilates", "barre", "yoga", "gentleStretch"]
    intensities = ["low", "medium", "high"]
    phases = ["menstrual", "follicular", "ovulatory", "luteal"]
    workouts = []
    for i in range(WORKOUTS):
        wid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        title = f"Workout {i} " + rng.choice(["Flow", "Burn", "Builder", "Reset", "Power"])
        kind = rng.choice(types)
        minutes = rng.randrange(10, 75, 5)
        intensity = rng.choice(intensities)
        count = rng.randint(1, 3)
        workout_phases = sorted(rng.sample(phases, count))
        instructor = rng.choice(["Ana", "Bo", "Cy", "Di"])
        workouts.append({
            "id": wid, "title": title,
            "description": "A session for benchmarking, number %d, with some descriptive words to search." % i,
            "type": kind, "durationMinutes": minutes, "intensity": intensity, "phases": workout_phases,
            "equipment": ["none"], "thumbnailURL": f"https://media.example/{wid}.jpg",
            "videoURL": f"https://media.example/{wid}.m3u8", "instructorName": instructor, "tags": ["bench"],
            "isFeatured": i % 50 == 0, "isPremium": False, "targetAreas": ["fullBody"], "benefits": ["Benchmarks well"],
        })
    return workouts


def pocketbase_id(workout_id):
    """PocketBase ids are 15 characters of [a-z0-9]."""
    return "w" + workout_id.replace("-", "")[:14]


# ---- HTTP and processes ----

def call(method, url, body=None, headers=None):
    """(status, decoded JSON body) — errors included, never raised."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            text = response.read()
            return response.status, (json.loads(text) if text else None)
    except urllib.error.HTTPError as error:
        text = error.read()
        try:
            return error.code, json.loads(text)
        except ValueError:
            return error.code, text


def expect(what, status_and_body, statuses=(200, 201)):
    status, body = status_and_body
    if status not in statuses:
        raise SystemExit(f"{what}: {status} {str(body)[:300]}")
    return body


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until_up(url, seconds=60):
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            urllib.request.urlopen(url, timeout=1)
            return
        except Exception:
            time.sleep(0.1)
    raise SystemExit(f"{url} did not answer within {seconds} s")


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) // 1024
    return 0


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


servers = []


def start(name, args, env=None):
    """Starts a server whose output goes to WORK/NAME.out and .err."""
    process = subprocess.Popen(args, env=env, stdout=open(os.path.join(work, name + ".out"), "w"),
                               stderr=open(os.path.join(work, name + ".err"), "w"))
    servers.append(process)
    return process


def stop_all():
    for process in servers:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()


# ---- the servers ----

def emails():
    """The benchmark users' addresses: EMAIL first (the one sign-in uses), then one more per extra account."""
    return [EMAIL] + [f"user{k}@bench.example" for k in range(1, ACCOUNTS)]


def start_fitbase(catalog_file, database_url):
    """Seeds the catalog, serves it, signs up the benchmark users; returns (process, base URL, access tokens).
    DATABASE_URL: the run's PostgreSQL database, or None for SQLite in the data dir."""
    data = os.path.join(work, "fitbase-data")
    env = dict(os.environ, FITBASE_BCRYPT_COST="10", FITBASE_DEMO_CATALOG="false", FITBASE_LOG_LEVEL="warning")
    env.pop("FITBASE_DATABASE_URL", None)
    if database_url:
        env["FITBASE_DATABASE_URL"] = database_url
    seeded = subprocess.run([FITBASE, "seed", "--catalog", catalog_file, "--data-dir", data], env=env,
                            capture_output=True, text=True)
    if seeded.returncode != 0:
        raise SystemExit("fitbase seed failed:\n" + seeded.stdout[-500:] + seeded.stderr[-500:])
    port = free_port()
    process = start("fitbase", [FITBASE, "serve", "--port", str(port), "--data-dir", data], env)
    url = f"http://127.0.0.1:{port}"
    wait_until_up(url + "/healthz")
    tokens = []
    for email in emails():
        expect("FitBase sign-up", call("POST", url + "/v1/auth/signup", {"email": email, "password": PASSWORD}), statuses=(202,))
        tokens.append(expect("FitBase sign-in", call("POST", url + "/v1/auth/signin", {"email": email, "password": PASSWORD}))["accessToken"])
    return process, url, tokens


def start_pocketbase(workouts):
    """Creates the superuser, serves, sets up the collections and the catalog, signs the benchmark users up and in;
    returns (process, base URL, [(auth token, user id)])."""
    data = os.path.join(work, "pb_data")
    subprocess.run([POCKETBASE, "superuser", "upsert", ADMIN_EMAIL, ADMIN_PASSWORD, "--dir", data], capture_output=True, check=True)
    port = free_port()
    process = start("pocketbase", [POCKETBASE, "serve", "--http", f"127.0.0.1:{port}", "--dir", data])
    url = f"http://127.0.0.1:{port}"
    wait_until_up(url + "/api/health")
    admin = expect("PocketBase superuser sign-in", call("POST", url + "/api/collections/_superusers/auth-with-password",
                                                        {"identity": ADMIN_EMAIL, "password": ADMIN_PASSWORD}))
    su = {"Authorization": admin["token"]}
    expect("PocketBase settings", call("PATCH", url + "/api/settings", {"logs": {"maxDays": 0}}, su))  # no request log
    users = expect("PocketBase users collection", call("GET", url + "/api/collections/users", None, su))
    if not users["passwordAuth"]["enabled"]:
        raise SystemExit("PocketBase's users collection has password sign-in off")
    # Password hashes: bcrypt at the password field's default cost, 10 (FitBase is set to 10 above).
    text = lambda name, **options: {"name": name, "type": "text", **options}
    typed = lambda name, kind: {"name": name, "type": kind}
    workouts_collection = expect("PocketBase workouts collection", call("POST", url + "/api/collections", {
        "name": "workouts", "type": "base", "listRule": "", "viewRule": "",
        "fields": [
            text("title", required=True, max=200), text("description"), text("type"), typed("durationMinutes", "number"),
            text("intensity"), typed("phases", "json"), typed("equipment", "json"), text("thumbnailURL"),
            text("videoURL"), text("instructorName"), typed("tags", "json"), typed("isFeatured", "bool"),
            typed("isPremium", "bool"), typed("targetAreas", "json"), typed("benefits", "json"),
            {"name": "created", "type": "autodate", "onCreate": True, "onUpdate": False},
            {"name": "updated", "type": "autodate", "onCreate": True, "onUpdate": True},
        ],
        "indexes": ["CREATE INDEX idx_w_type_dur ON workouts (type, durationMinutes)"],
    }, su), statuses=(200,))
    expect("PocketBase history collection", call("POST", url + "/api/collections", {
        "name": "history", "type": "base",
        "listRule": "user = @request.auth.id", "viewRule": "user = @request.auth.id",
        "createRule": '@request.auth.id != "" && user = @request.auth.id',
        "fields": [
            {"name": "user", "type": "relation", "collectionId": "_pb_users_auth_", "maxSelect": 1, "required": True},
            {"name": "workout", "type": "relation", "collectionId": workouts_collection["id"], "maxSelect": 1, "required": True},
            {"name": "completedAt", "type": "date", "required": True},
            {"name": "duration", "type": "number", "min": 1, "max": 600},
            {"name": "rating", "type": "number", "min": 1, "max": 5},
            {"name": "created", "type": "autodate", "onCreate": True, "onUpdate": False},
        ],
        "indexes": ["CREATE INDEX idx_h_user ON history (user, completedAt)"],
    }, su), statuses=(200,))
    for workout in workouts:
        record = {key: value for key, value in workout.items() if key != "id"}
        record["id"] = pocketbase_id(workout["id"])
        expect("PocketBase workout", call("POST", url + "/api/collections/workouts/records", record, su), statuses=(200,))
    users = []
    for email in emails():
        expect("PocketBase sign-up", call("POST", url + "/api/collections/users/records",
                                          {"email": email, "password": PASSWORD, "passwordConfirm": PASSWORD}), statuses=(200,))
        signed_in = expect("PocketBase sign-in", call("POST", url + "/api/collections/users/auth-with-password",
                                                      {"identity": email, "password": PASSWORD}))
        users.append((signed_in["token"], signed_in["record"]["id"]))
    return process, url, users


def start_bare_hello():
    process = start("bare-hello", [BARE_HELLO, "--port", "0"])
    out = os.path.join(work, "bare-hello.out")
    deadline = time.time() + 30
    while time.time() < deadline:
        found = re.search(r"listening on (http://\S+)", open(out).read())
        if found:
            return process, found.group(1)
        if process.poll() is not None:
            break
        time.sleep(0.1)
    raise SystemExit("bench-bare-hello did not start:\n" + open(os.path.join(work, "bare-hello.err")).read()[-500:])


# ---- wrk ----

def lua_script(name, headers, body_expression):
    """A wrk script POSTing JSON; BODY_EXPRESSION is Lua and may use `n`, the request's number in its thread."""
    path = os.path.join(work, name + ".lua")
    header_lines = "".join(f'wrk.headers["{key}"] = "{value}"\n' for key, value in headers.items())
    with open(path, "w") as script:
        script.write('wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\n' + header_lines +
                     "local n = 0\nrequest = function()\n  n = n + 1\n"
                     f"  local body = {body_expression}\n  return wrk.format(nil, nil, nil, body)\nend\n")
    return path


def rotating_script(name, authorizations, body_expression=None, users=None):
    """A wrk script whose requests take AUTHORIZATIONS (Authorization header values) in turn; with BODY_EXPRESSION a
    POST of that JSON (Lua, may use `n` and `user`, the turn's entry of USERS), else a GET of the URL."""
    path = os.path.join(work, name + ".lua")
    listed = lambda values: "{" + ",".join(f'"{value}"' for value in values) + "}"
    method, body = ("POST", body_expression) if body_expression else ("GET", "nil")
    with open(path, "w") as script:
        script.write(f"local authorizations = {listed(authorizations)}\nlocal users = {listed(users or [])}\n"
                     "local n = 0\nrequest = function()\n  n = n + 1\n  local k = n % #authorizations + 1\n"
                     "  local user = users[k]\n"
                     '  local headers = {["Authorization"] = authorizations[k], ["Content-Type"] = "application/json"}\n'
                     f'  return wrk.format("{method}", nil, headers, {body})\nend\n')
    return path


def header_script(name, headers):
    """A wrk script that only adds HEADERS to wrk's GET of the URL."""
    path = os.path.join(work, name + ".lua")
    with open(path, "w") as script:
        script.write("".join(f'wrk.headers["{key}"] = "{value}"\n' for key, value in headers.items()))
    return path


def measure(label, url, script, process, conns):
    """One wrk run against URL while sampling the server's CPU time and RSS."""
    time.sleep(1)
    cpu_before, started, peak = cpu_seconds(process.pid), time.time(), 0
    args = ["wrk", "-t2", f"-c{conns}", f"-d{duration}s", "--latency"] + (["-s", script] if script else []) + [url]
    run = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
    while run.poll() is None:
        peak = max(peak, rss_mb(process.pid))
        time.sleep(0.25)
    out = run.stdout.read()
    cores = (cpu_seconds(process.pid) - cpu_before) / (time.time() - started)
    with open(os.path.join(work, f"wrk-{label}.txt"), "w") as log:
        log.write(" ".join(args) + "\n" + out)
    rate = re.search(r"Requests/sec:\s+([\d.]+)", out)
    if not rate:
        raise SystemExit(f"wrk {label} printed no rate:\n{out}")
    latency = dict(re.findall(r"^\s+(50|99)%\s+(\S+)", out, re.M))
    non_2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    socket_errors = re.search(r"Socket errors: (.*)", out)
    return {"rps": float(rate.group(1)), "p50": latency.get("50"), "p99": latency.get("99"), "cpu": round(cores, 2),
            "peak": peak, "non2xx": int(non_2xx.group(1)) if non_2xx else 0,
            "errors": socket_errors.group(1) if socket_errors else "", "wrk": out}


def cells(result):
    problems = [f"non-2xx {result['non2xx']}"] if result["non2xx"] else []
    problems += [f"socket errors: {result['errors']}"] if result["errors"] else []
    flag = f" ({', '.join(problems)})" if problems else ""
    return f"{result['rps']:.0f}{flag} | {result['p50']} | {result['p99']} | {result['cpu']} | {result['peak']}"


def main(database_url, engine):
    workouts = catalog()
    catalog_file = os.path.join(work, "catalog.json")
    with open(catalog_file, "w") as out:
        json.dump({"workouts": workouts, "programs": []}, out)

    fitbase, F, fitbase_tokens = start_fitbase(catalog_file, database_url)
    fitbase_token = fitbase_tokens[0]
    idle = {"FitBase": rss_mb(fitbase.pid)}
    pocketbase, P, pocketbase_users = start_pocketbase(workouts)
    pocketbase_token, pocketbase_user = pocketbase_users[0]
    idle["PocketBase"] = rss_mb(pocketbase.pid)
    bare = B = None
    if BARE_HELLO:
        bare, B = start_bare_hello()
        idle["bare Hummingbird"] = rss_mb(bare.pid)

    list_query = "/v1/workouts?type=strength&minDuration=30&sort=longest&limit=20"
    pocketbase_list = ("/api/collections/workouts/records?filter=" + urllib.parse.quote('type="strength" && durationMinutes>=30')
                       + "&sort=-durationMinutes&perPage=20&skipTotal=1")
    # Same answer on both: a full page of 20 workouts.
    fitbase_page = expect("FitBase list", call("GET", F + list_query))
    pocketbase_page = expect("PocketBase list", call("GET", P + pocketbase_list))
    if len(fitbase_page["items"]) != 20 or len(pocketbase_page["items"]) != 20:
        raise SystemExit(f"list pages differ: FitBase {len(fitbase_page['items'])}, PocketBase {len(pocketbase_page['items'])}")

    logged, logged_pb = workouts[7]["id"], pocketbase_id(workouts[7]["id"])
    # As the reference script: each log completes a second before the one before it in its wrk thread, going back
    # from an hour ago; duration and rating vary with each request.
    base = int(time.time()) - 3600
    completed = lambda layout: f"os.date('!{layout}', {base} - n)"
    rating = "10 + n % 80, 1 + n % 5"
    fitbase_create = lua_script("fitbase-create", {"Authorization": "Bearer " + fitbase_token},
                                f"string.format('{{\"workoutId\":\"{logged}\",\"completedAt\":\"%s\",\"duration\":%d,\"rating\":%d}}', {completed('%Y-%m-%dT%H:%M:%SZ')}, {rating})")
    pocketbase_create = lua_script("pocketbase-create", {"Authorization": pocketbase_token},
                                   f"string.format('{{\"user\":\"{pocketbase_user}\",\"workout\":\"{logged_pb}\",\"completedAt\":\"%s\",\"duration\":%d,\"rating\":%d}}', {completed('%Y-%m-%d %H:%M:%SZ')}, {rating})")
    fitbase_mine = header_script("fitbase-mine", {"Authorization": "Bearer " + fitbase_token})
    pocketbase_mine = header_script("pocketbase-mine", {"Authorization": pocketbase_token})
    if ACCOUNTS > 1:
        fitbase_create = rotating_script(
            "fitbase-create", ["Bearer " + token for token in fitbase_tokens],
            f"string.format('{{\"workoutId\":\"{logged}\",\"completedAt\":\"%s\",\"duration\":%d,\"rating\":%d}}', {completed('%Y-%m-%dT%H:%M:%SZ')}, {rating})")
        pocketbase_create = rotating_script(
            "pocketbase-create", [token for token, _ in pocketbase_users],
            f"string.format('{{\"user\":\"%s\",\"workout\":\"{logged_pb}\",\"completedAt\":\"%s\",\"duration\":%d,\"rating\":%d}}', user, {completed('%Y-%m-%d %H:%M:%SZ')}, {rating})",
            users=[user for _, user in pocketbase_users])
        fitbase_mine = rotating_script("fitbase-mine", ["Bearer " + token for token in fitbase_tokens])
        pocketbase_mine = rotating_script("pocketbase-mine", [token for token, _ in pocketbase_users])
    fitbase_signin = lua_script("fitbase-signin", {}, f"'{{\"email\":\"{EMAIL}\",\"password\":\"{PASSWORD}\"}}'")
    pocketbase_signin = lua_script("pocketbase-signin", {}, f"'{{\"identity\":\"{EMAIL}\",\"password\":\"{PASSWORD}\"}}'")
    shown = workouts[123]["id"]
    tests = [
        ("hello", F + "/healthz", None, P + "/api/health", None, connections),
        ("get", F + "/v1/workouts/" + shown, None, P + "/api/collections/workouts/records/" + pocketbase_id(shown), None, connections),
        ("list", F + list_query, None, P + pocketbase_list, None, connections),
        ("create", F + "/v1/history", fitbase_create, P + "/api/collections/history/records", pocketbase_create, connections),
        ("mine", F + "/v1/history?limit=20", fitbase_mine,
         P + "/api/collections/history/records?perPage=20&sort=-completedAt&skipTotal=1", pocketbase_mine, connections),
        ("signin", F + "/v1/auth/signin", fitbase_signin, P + "/api/collections/users/auth-with-password", pocketbase_signin,
         SIGNIN_CONNECTIONS),
    ]

    load = os.getloadavg()
    print(f"FitBase on {engine} vs PocketBase, {WORKOUTS} workouts each, {ACCOUNTS} account{'s' if ACCOUNTS > 1 else ''} "
          f"(create, mine), wrk -t2 -c{connections} -d{duration}s (signin "
          f"-c{SIGNIN_CONNECTIONS}), request logs off, bcrypt cost 10; load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print()
    print(f"| test | FitBase ({engine.split(' ')[0]}) req/s | p50 | p99 | CPU | peak RSS MB | PocketBase req/s | p50 | p99 | CPU | peak RSS MB | FitBase/PocketBase |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    results = {}
    for name, fitbase_url, fitbase_script, pocketbase_url, pocketbase_script, conns in tests:
        ours = measure("fitbase-" + name, fitbase_url, fitbase_script, fitbase, conns)
        theirs = measure("pocketbase-" + name, pocketbase_url, pocketbase_script, pocketbase, conns)
        results[name] = {"fitbase": ours, "pocketbase": theirs}
        print(f"| {name} | {cells(ours)} | {cells(theirs)} | {ours['rps'] / theirs['rps']:.2f} |", flush=True)
        if name == "hello" and bare:
            floor = measure("bare-hello", B + "/healthz", None, bare, conns)
            results["bare-hello"] = {"bare": floor}
            print(f"| hello, bare Hummingbird | {cells(floor)} | | | | | | /healthz = {ours['rps'] / floor['rps']:.0%} of bare |",
                  flush=True)
    load = os.getloadavg()
    print()
    print("idle RSS MB (after start-up and seeding): " + ", ".join(f"{name} {mb}" for name, mb in idle.items())
          + f"; after the runs: FitBase {rss_mb(fitbase.pid)}, PocketBase {rss_mb(pocketbase.pid)}")
    if bare:
        hello, floor = results["hello"]["fitbase"], results["bare-hello"]["bare"]
        print(f"FitBase /healthz: {hello['rps']:.0f} req/s = {hello['rps'] / floor['rps']:.0%} of bare Hummingbird "
              f"({floor['rps']:.0f} req/s, p99 {floor['p99']})")
    print(f"load average after the runs: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")

    if os.environ.get("BENCH_JSON"):
        with open(os.environ["BENCH_JSON"], "w") as out:
            json.dump({"duration": duration, "connections": connections, "accounts": ACCOUNTS, "engine": engine, "idleRSS": idle,
                       "results": results}, out, indent=1)
    failed = [(name, server, result) for name, pair in results.items() for server, result in pair.items()
              if result["non2xx"] or result["errors"]]
    for name, server, result in failed:
        print(f"\n{server} {name}: wrk saw non-2xx responses or socket errors:\n{result['wrk']}", file=sys.stderr)
    return 1 if failed else 0


def run():
    """main() on SQLite, or on a fresh PostgreSQL database (dropped after the servers stop) when FITBASE_DATABASE_URL
    names a PostgreSQL server."""
    if not DATABASE_URL:
        return main(None, "SQLite")
    server = benchpg.PostgresServer(DATABASE_URL)
    with server.fresh_database("bench_vs_pb") as database:
        try:
            return main(server.url(database), f"PostgreSQL {server.version().split(' ')[0]}")
        finally:
            stop_all()


if __name__ == "__main__":
    try:
        status = run()
    finally:
        stop_all()
        if os.environ.get("BENCH_KEEP"):
            print(f"kept {work} (server output, wrk scripts and output)", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    sys.exit(status)
