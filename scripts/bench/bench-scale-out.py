#!/usr/bin/env python3
"""FitBase scale-out on PostgreSQL: one `fitbase serve` instance, then two (and more) sharing one database, behind
haproxy (see scripts/bench/bench-scale-out.sh, which checks the tools and finds or builds the binary).

    FITBASE_BIN=… FITBASE_DATABASE_URL=postgres://… bench-scale-out.py [SECONDS] [CONNECTIONS] [BATCH]

Each configuration runs on its own fresh database (bench_scale_out_<pid>_<random>, created through psql on the URL's
server and dropped after), with the same setup, as docs/deploying.md asks of a deployment: one
FITBASE_MASTER_KEY (generated for the run) and one FITBASE_PUBLIC_URL (the proxy's: it is the tokens' issuer) for
every instance, the proxy in FITBASE_TRUSTED_PROXIES (haproxy adds X-Forwarded-For), a data directory each, request
logs off, FITBASE_RATE_LIMITS=off, the demo catalog, bcrypt cost 4 (only sign-ups hash passwords here). The instances
start one after the other (the first applies the migrations) and sit behind haproxy (http mode, balance roundrobin,
keep-alive; its config is generated into the temp dir): one server line, then two. The client always goes through
the proxy, so both configurations pay its hop and the ratio is the second instance's worth. Note that each instance
brings its own connection pool, so two instances also hold twice the PostgreSQL connections.

CONNECTIONS accounts (BENCH_ACCOUNTS overrides) sign up through the proxy. Every request names one of them, chosen in
turn by the wrk script from its thread's share (wrk -t2: the two threads hold disjoint halves), so with as many
accounts as connections the requests in flight are nearly all different users and one user's row lock does not
serialise the run. Tests, each `wrk -t2 -cCONNECTIONS -dSECONDSs --latency --timeout 10s` after a one-second pause:

  create   POST /v1/history                   a workout log; each completes a second before the thread's last one
  mine     GET /v1/history?limit=20           the account's 20 newest logs, right after create (each holds the
                                              logs create wrote for it)
  push     POST /v1/sync/push                 BATCH new workoutLogs upserts (client-chosen ids and mutation ids);
                                              the script counts the `applied` results, which must be all of them

Prints a markdown table (req/s, p50, p99 with one instance and with two, and the two/one ratio of req/s), the
answers each instance gave (haproxy's per-server counts by status class), and the CPU seconds of each process over each run:
the instances, haproxy, wrk, PostgreSQL's backends serving the run's database, the rest of PostgreSQL, and the rest of
the machine (from /proc/stat). Exits 1 when wrk saw a non-2xx answer or a socket error, or a push was not applied.
BENCH_KEEP=1 keeps the temp dir (instances' output, haproxy config, wrk scripts and output); BENCH_JSON=FILE writes
the figures as JSON.

BENCH_INSTANCES=1,2,3 chooses the configurations (default 1,2); each ratio is against the first. BENCH_CPU_QUOTA=Q
(cores, e.g. 0.3) puts every instance in a cgroup of its own (cgroup v1, /sys/fs/cgroup/cpu/fitbase-bench-…, as root)
whose cpu.cfs_quota_us lets it use at most Q cores, while PostgreSQL, haproxy and wrk stay outside any quota. On a
machine whose cores one instance and PostgreSQL already fill, this is how scale-out is shown: pick Q so that the
largest N times Q, plus what PostgreSQL, haproxy and wrk need, fits in the machine; then N instances can have N times
the CPU, and a ratio short of N says something serializes across instances (a lock, a hot row, the database). The
report gives each instance's CPU against its quota and how often the kernel throttled it (cpu.stat).
"""
import base64
import json
import os
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid

import benchpg

FITBASE = os.environ["FITBASE_BIN"]
DATABASE_URL = os.environ.get("FITBASE_DATABASE_URL", "")
duration = int(sys.argv[1]) if len(sys.argv) > 1 else 10
connections = int(sys.argv[2]) if len(sys.argv) > 2 else 32
batch = int(sys.argv[3]) if len(sys.argv) > 3 else 100
accounts = int(os.environ.get("BENCH_ACCOUNTS") or connections)
counts = [int(n) for n in os.environ.get("BENCH_INSTANCES", "1,2").split(",")]
quota = float(os.environ.get("BENCH_CPU_QUOTA") or 0)
CGROUP_CPU = "/sys/fs/cgroup/cpu"
cgroups = []
THREADS = 2
TICK = os.sysconf("SC_CLK_TCK")

work = tempfile.mkdtemp(prefix="fitbase-scale-out.")
processes = []


# ---- processes ----

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def call(method, url, body=None, token=None):
    """(status, decoded JSON) — errors included, never raised."""
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


def expect(what, answer):
    status, body = answer
    if status not in (200, 201):
        raise SystemExit(f"{what}: {status} {str(body)[:300]}")
    return body


def wait_until_up(url, process, name, seconds=60):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if process.poll() is not None:
            break
        try:
            urllib.request.urlopen(url, timeout=1)
            return
        except Exception:
            time.sleep(0.1)
    raise SystemExit(f"{name} did not answer {url}:\n" + open(os.path.join(work, name + ".err")).read()[-1000:])


def start(name, args, env=None):
    process = subprocess.Popen(args, env=env, stdout=open(os.path.join(work, name + ".out"), "w"),
                               stderr=open(os.path.join(work, name + ".err"), "w"))
    processes.append(process)
    return process


def stop_all():
    while processes:
        process = processes.pop()
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def confine(name, pid):
    """Puts `pid` (all its threads) in a new cgroup v1 CPU group allowed `quota` cores; the group's directory."""
    group = os.path.join(CGROUP_CPU, f"fitbase-bench-{os.getpid()}-{name}")
    os.mkdir(group)
    cgroups.append(group)
    with open(os.path.join(group, "cpu.cfs_period_us")) as period_file:
        period = int(period_file.read())
    with open(os.path.join(group, "cpu.cfs_quota_us"), "w") as quota_file:
        quota_file.write(str(int(quota * period)))
    with open(os.path.join(group, "cgroup.procs"), "w") as procs:
        procs.write(str(pid))
    return group


def throttling(group):
    """(periods, throttled periods, seconds throttled) so far, from the group's cpu.stat."""
    with open(os.path.join(group, "cpu.stat")) as stat:
        values = dict(line.split() for line in stat)
    return int(values["nr_periods"]), int(values["nr_throttled"]), int(values["throttled_time"]) / 1e9


def remove_cgroups():
    while cgroups:
        group = cgroups.pop()
        for _ in range(50):
            try:
                os.rmdir(group)
                break
            except OSError:
                time.sleep(0.1)  # its processes are still exiting


def cpu_seconds(pid):
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICK
    except (FileNotFoundError, ProcessLookupError):
        return 0.0


def postgres_cpu():
    """CPU seconds of every process named postgres, by pid."""
    found = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/comm") as comm:
                    if comm.read().strip() == "postgres":
                        found[int(entry)] = cpu_seconds(entry)
            except OSError:
                pass
    return found


def machine_busy_seconds():
    """CPU seconds all cores spent on anything but idle and iowait, from /proc/stat."""
    with open("/proc/stat") as stat:
        fields = [int(x) for x in stat.readline().split()[1:]]
    return (sum(fields[:8]) - fields[3] - fields[4]) / TICK


# ---- one configuration: N instances behind haproxy on a fresh database ----

def haproxy_config(port, stats_port, instance_ports):
    servers = "".join(f"    server i{k + 1} 127.0.0.1:{p}\n" for k, p in enumerate(instance_ports))
    path = os.path.join(work, f"haproxy-{len(instance_ports)}.cfg")
    with open(path, "w") as config:
        config.write(f"""global
    maxconn 4096

defaults
    mode http
    option http-keep-alive
    option forwardfor
    timeout connect 5s
    timeout client 60s
    timeout server 60s

frontend fitbase
    bind 127.0.0.1:{port}
    default_backend instances

backend instances
    balance roundrobin
{servers}
listen stats
    bind 127.0.0.1:{stats_port}
    stats enable
    stats uri /stats
""")
    return path


ANSWER_CLASSES = ("2xx", "1xx", "3xx", "4xx", "5xx", "other")


def answered_per_instance(stats_url):
    """haproxy's answers so far per instance (server line), by class: {"i1": {"2xx": n, "5xx": m, …}}."""
    with urllib.request.urlopen(stats_url + ";csv", timeout=5) as answer:
        lines = answer.read().decode().splitlines()
    columns = lines[0].lstrip("# ").split(",")
    counts = {}
    for line in lines[1:]:
        row = dict(zip(columns, line.split(",")))
        if row.get("pxname") == "instances" and row.get("svname", "").startswith("i"):
            counts[row["svname"]] = {kind: int(row["hrsp_" + kind] or 0) for kind in ANSWER_CLASSES}
    return counts


def lua_prelude(tokens):
    """The part every test's wrk script shares: the tokens, each thread's share of them taken in turn, and a counter."""
    listed = ",".join(f'"{t}"' for t in tokens)
    return f"""local tokens = {{{listed}}}
local threads, started = {{}}, 0
function setup(thread)
  started = started + 1
  thread:set("id", started)
  table.insert(threads, thread)
end
local mine, turn, n = {{}}, 0, 0
function init(args)
  for i = id, #tokens, {THREADS} do mine[#mine + 1] = tokens[i] end
  if #mine == 0 then mine = tokens end  -- fewer accounts than threads: share them
  math.randomseed(os.time() * 1000 + id)
end
local function next_token()
  turn = turn % #mine + 1
  return mine[turn]
end
local function headers()
  return {{["Authorization"] = "Bearer " .. next_token(), ["Content-Type"] = "application/json"}}
end
"""


def wrk_scripts(tokens, workout):
    base = int(time.time()) - 3600
    scripts = {
        "create": f"""
request = function()
  n = n + 1
  local body = string.format('{{"workoutId":"{workout}","completedAt":"%s","duration":%d,"rating":%d}}',
    os.date('!%Y-%m-%dT%H:%M:%SZ', {base} - n), 10 + n % 80, 1 + n % 5)
  return wrk.format("POST", "/v1/history", headers(), body)
end
""",
        "mine": """
request = function()
  return wrk.format("GET", "/v1/history?limit=20", headers(), nil)
end
""",
        # Ids: a per-thread random prefix, the thread's number and a counter, so no two mutations share one.
        "push": f"""
local prefix = 0
applied = 0  -- a global, so that done() can read each thread's count
local function uuid()
  n = n + 1
  if prefix == 0 then prefix = math.random(1, 2147483646) end
  return string.format("%08x-%04x-4%03x-a%03x-%012x", prefix, id, math.random(0, 4095), math.random(0, 4095), n)
end
request = function()
  local now = os.time()
  local mutations = {{}}
  for i = 1, {batch} do
    mutations[i] = string.format('{{"mutationId":"%s","collection":"workoutLogs","id":"%s","op":"upsert",' ..
      '"updatedAt":"%s","data":{{"workoutId":"{workout}","completedAt":"%s","duration":30,"rating":4}}}}',
      uuid(), uuid(), os.date('!%Y-%m-%dT%H:%M:%SZ', now), os.date('!%Y-%m-%dT%H:%M:%SZ', {base} - n))
  end
  return wrk.format("POST", "/v1/sync/push", headers(), '{{"mutations":[' .. table.concat(mutations, ",") .. ']}}')
end
response = function(status, headers, body)
  if status == 200 then
    local _, count = string.gsub(body, '"status":"applied"', "")
    applied = applied + count
  end
end
function done(summary, latency, requests)
  local total = 0
  for _, thread in ipairs(threads) do total = total + thread:get("applied") end
  io.write(string.format("applied mutations: %d\\n", total))
end
""",
    }
    paths = {}
    for name, body in scripts.items():
        paths[name] = os.path.join(work, f"{name}.lua")
        with open(paths[name], "w") as script:
            script.write(lua_prelude(tokens) + body)
    return paths


def measure(label, url, script, watched, database_pids, groups):
    """One wrk run through the proxy; CPU seconds of every process of interest over it, and each quota's throttling."""
    throttled_before = {name: throttling(group) for name, group in groups.items()}
    pg_before = postgres_cpu()
    own_before = {name: cpu_seconds(pid) for name, pid in watched.items()}
    busy_before, children_before = machine_busy_seconds(), resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.time()
    args = ["wrk", f"-t{THREADS}", f"-c{connections}", f"-d{duration}s", "--latency", "--timeout", "10s", "-s", script, url]
    out = subprocess.run(args, stdout=subprocess.PIPE, text=True).stdout
    elapsed, busy = time.time() - started, machine_busy_seconds() - busy_before
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = {name: cpu_seconds(pid) - own_before[name] for name, pid in watched.items()}
    cpu["wrk"] = (children.ru_utime - children_before.ru_utime) + (children.ru_stime - children_before.ru_stime)
    pg_delta = {pid: seconds - pg_before.get(pid, 0.0) for pid, seconds in postgres_cpu().items()}
    ours = database_pids()  # asked after the CPU figures are taken: psql's own time stays out of them
    cpu["postgres (run's db)"] = sum(s for pid, s in pg_delta.items() if pid in ours)
    cpu["postgres (rest)"] = sum(s for pid, s in pg_delta.items() if pid not in ours)
    cpu["rest of machine"] = max(0.0, busy - sum(cpu.values()))
    with open(os.path.join(work, f"wrk-{label}.txt"), "w") as log:
        log.write(" ".join(args) + "\n" + out)
    rate = re.search(r"Requests/sec:\s+([\d.]+)", out)
    if not rate:
        raise SystemExit(f"wrk {label} printed no rate:\n{out}")
    latency = dict(re.findall(r"^\s+(50|99)%\s+(\S+)", out, re.M))
    non_2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    socket_errors = re.search(r"Socket errors: (.*)", out)
    requests = re.search(r"(\d+) requests in", out)
    applied = re.search(r"applied mutations: (\d+)", out)
    throttled = {}
    for name, group in groups.items():
        after, before = throttling(group), throttled_before[name]
        throttled[name] = {"periods": after[0] - before[0], "throttled": after[1] - before[1],
                           "seconds": round(after[2] - before[2], 2)}
    return {"throttled": throttled, "rps": float(rate.group(1)), "p50": latency.get("50"), "p99": latency.get("99"),
            "requests": int(requests.group(1)) if requests else 0, "applied": int(applied.group(1)) if applied else None,
            "non2xx": int(non_2xx.group(1)) if non_2xx else 0, "errors": socket_errors.group(1) if socket_errors else "",
            "seconds": round(elapsed, 2), "cpu": {name: round(s, 2) for name, s in cpu.items()}, "wrk": out}


def run_configuration(server, count, master_key):
    """COUNT instances on a fresh database behind haproxy: the three tests' results."""
    with server.fresh_database("bench_scale_out") as database:
        try:
            proxy_port, stats_port = free_port(), free_port()
            proxy = f"http://127.0.0.1:{proxy_port}"
            env = dict(os.environ, FITBASE_DATABASE_URL=server.url(database), FITBASE_MASTER_KEY=master_key,
                       FITBASE_PUBLIC_URL=proxy, FITBASE_RATE_LIMITS="off", FITBASE_LOG_LEVEL="warning",
                       FITBASE_BCRYPT_COST="4", FITBASE_TRUSTED_PROXIES="127.0.0.1")
            env.pop("FITBASE_MASTER_KEY_FILE", None)
            watched, ports, groups = {}, [], {}
            for k in range(1, count + 1):
                port = free_port()
                name = f"fitbase-{count}-{k}"
                process = start(name, [FITBASE, "serve", "--port", str(port),
                                       "--data-dir", os.path.join(work, f"data-{count}-{k}")], env)
                if quota:
                    # Confined from its start on: a process's threads all follow it into the group.
                    groups[f"fitbase #{k}"] = confine(name, process.pid)
                wait_until_up(f"http://127.0.0.1:{port}/healthz", process, name)
                watched[f"fitbase #{k}"] = process.pid
                ports.append(port)
            haproxy = start(f"haproxy-{count}", ["haproxy", "-db", "-f", haproxy_config(proxy_port, stats_port, ports)])
            wait_until_up(proxy + "/healthz", haproxy, f"haproxy-{count}")
            watched["haproxy"] = haproxy.pid

            tokens = []
            for k in range(accounts):
                credentials = {"email": f"scale-{k}-{uuid.uuid4().hex[:8]}@bench.example", "password": "benchmark password"}
                status, body = call("POST", proxy + "/v1/auth/signup", credentials)
                if status != 202:
                    raise SystemExit(f"sign-up: {status} {str(body)[:300]}")
                tokens.append(expect("sign-in", call("POST", proxy + "/v1/auth/signin", credentials))["accessToken"])
            listed = expect("catalog", call("GET", proxy + "/v1/workouts?limit=1"))["items"]
            if not listed:
                raise SystemExit("the demo catalog is empty")
            workout = listed[0]["id"]
            # Every instance accepts every token and a push is applied (round robin: consecutive calls alternate).
            for k in range(2 * count):
                expect(f"list through the proxy ({k})", call("GET", proxy + "/v1/history?limit=1", token=tokens[0]))
            probe = expect("sync push probe", call("POST", proxy + "/v1/sync/push", {"mutations": [{
                "mutationId": str(uuid.uuid4()), "collection": "workoutLogs", "id": str(uuid.uuid4()), "op": "upsert",
                "updatedAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "data": {"workoutId": workout, "completedAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 60)),
                         "duration": 30}}]}, tokens[0]))
            if probe["results"][0]["status"] != "applied":
                raise SystemExit(f"sync push probe: {probe}")

            scripts = wrk_scripts(tokens, workout)
            database_pids = lambda: {int(p) for p in server.query(
                f"SELECT pid FROM pg_stat_activity WHERE datname = '{database}'").split()}
            stats = f"http://127.0.0.1:{stats_port}/stats"
            results = {}
            for test in ("create", "mine", "push"):
                time.sleep(1)
                before = answered_per_instance(stats)
                results[test] = measure(f"{test}-{count}", proxy + "/", scripts[test], watched, database_pids, groups)
                time.sleep(1)
                after = answered_per_instance(stats)
                results[test]["perInstance"] = {name: {kind: after[name][kind] - before[name][kind] for kind in ANSWER_CLASSES
                                                       if after[name][kind] > before[name][kind]} for name in after}
            return results
        finally:
            stop_all()
            remove_cgroups()


def flag(result):
    problems = [f"non-2xx {result['non2xx']}"] if result["non2xx"] else []
    problems += [f"socket errors: {result['errors']}"] if result["errors"] else []
    if result["applied"] is not None and result["applied"] != result["requests"] * batch:
        problems.append(f"applied {result['applied']} of {result['requests'] * batch}")
    return f" ({', '.join(problems)})" if problems else ""


def main():
    if not DATABASE_URL.startswith(("postgres://", "postgresql://")):
        raise SystemExit("FITBASE_DATABASE_URL=postgres://… is needed: the instances share a PostgreSQL database")
    if quota and not os.access(CGROUP_CPU, os.W_OK):
        raise SystemExit(f"BENCH_CPU_QUOTA needs a writable cgroup v1 CPU hierarchy at {CGROUP_CPU} (run as root)")
    server = benchpg.PostgresServer(DATABASE_URL)
    settings = server.query("SELECT string_agg(name || '=' || setting, ', ' ORDER BY name) FROM pg_settings "
                            "WHERE name IN ('fsync', 'synchronous_commit', 'max_connections', 'shared_buffers')")
    master_key = base64.b64encode(os.urandom(32)).decode()
    results = {count: run_configuration(server, count, master_key) for count in counts}

    def instances(count):
        return f"{count} instance{'s' if count > 1 else ''}"

    load = os.getloadavg()
    confined = (f"each instance confined to {quota:g} cores (cgroup v1 cpu.cfs_quota_us), PostgreSQL, haproxy and wrk "
                "unconfined" if quota else "no CPU quotas")
    print(f"FitBase scale-out on PostgreSQL {server.version().split(' ')[0]} ({settings}), through haproxy, "
          f"wrk -t{THREADS} -c{connections} -d{duration}s, {accounts} accounts, push batches of {batch}; {confined}; "
          f"{os.cpu_count()} cores shared by wrk, haproxy, PostgreSQL and the instances; "
          f"load average after {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print()
    first = counts[0]
    header = "| test |" + "".join(f" {instances(n)} req/s | p50 | p99 |" + (f" {n}/{first} |" if n != first else "")
                                  for n in counts)
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    for test, label in (("create", "create (POST /v1/history)"), ("mine", "own list (GET /v1/history?limit=20)"),
                        ("push", f"sync push ({batch} workoutLogs per request)")):
        base = results[first][test]
        cells = ""
        for n in counts:
            result = results[n][test]
            cells += f" {result['rps']:.0f}{flag(result)} | {result['p50']} | {result['p99']} |"
            if n != first:
                cells += f" {result['rps'] / base['rps']:.2f} |"
        print(f"| {label} |{cells}")
    print("\nsync push, mutations applied per second: " + ", ".join(
        f"{instances(n)} {results[n]['push']['applied'] / results[n]['push']['seconds']:.0f}" for n in counts))
    print("\nanswers per instance (haproxy's counts by status class, from a run's start until a second after it: "
          "requests wrk leaves in flight are answered after it stops):")
    for count in counts:
        for test, result in results[count].items():
            shares = ", ".join(f"{name} " + " ".join(f"{n} {kind}" for kind, n in classes.items())
                               for name, classes in sorted(result["perInstance"].items()))
            print(f"  {instances(count)}, {test}: {shares}")
    print("\nCPU seconds over each run (cores busy = seconds / run time; "
          f"{os.cpu_count()} cores make {os.cpu_count()} s per second):")
    for count in counts:
        for test, result in results[count].items():
            spent = ", ".join(f"{name} {seconds:.1f}" for name, seconds in result["cpu"].items())
            total = sum(result["cpu"].values())
            print(f"  {instances(count)}, {test} ({result['seconds']:.1f} s): {spent}; "
                  f"all {total:.1f} s = {total / result['seconds']:.2f} cores")
    if quota:
        print(f"\nquotas ({quota:g} cores each): each instance's CPU as a share of its quota over the run, and the "
              "share of scheduler periods in which the kernel throttled it:")
        for count in counts:
            for test, result in results[count].items():
                shares = ", ".join(
                    f"{name} {result['cpu'][name] / (quota * result['seconds']):.0%} used, "
                    f"{t['throttled'] / max(t['periods'], 1):.0%} throttled"
                    for name, t in sorted(result["throttled"].items()))
                print(f"  {instances(count)}, {test}: {shares}")

    if os.environ.get("BENCH_JSON"):
        with open(os.environ["BENCH_JSON"], "w") as out:
            json.dump({"duration": duration, "connections": connections, "accounts": accounts, "batch": batch,
                       "quota": quota, "postgres": settings,
                       "results": {str(count): results[count] for count in counts}}, out, indent=1)
    failed = [(count, test, result) for count, tests in results.items() for test, result in tests.items() if flag(result)]
    for count, test, result in failed:
        print(f"\n{count} instance(s), {test}: {flag(result).strip()}\n{result['wrk']}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    try:
        status = main()
    finally:
        stop_all()
        remove_cgroups()
        if os.environ.get("BENCH_KEEP"):
            print(f"kept {work} (instances' output, haproxy config, wrk scripts and output)", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    sys.exit(status)
