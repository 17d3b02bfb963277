"""One user's concurrent health reads vs another user's workout logs: see bench-audit.sh."""
import http.client
import json
import sys
import threading
import time
import urllib.parse
import uuid
from datetime import datetime, timedelta, timezone

url, readers, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
host = urllib.parse.urlparse(url)


def call(conn, method, path, body=None, token=None):
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    conn.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers)
    response = conn.getresponse()
    data = response.read()
    return response.status, (json.loads(data) if data else None)


def connect():
    return http.client.HTTPConnection(host.hostname, host.port, timeout=60)


def signup(conn):
    credentials = {"email": f"bench-{uuid.uuid4().hex[:10]}@example.com", "password": "correct horse battery"}
    status, body = call(conn, "POST", "/v1/auth/signup", credentials)
    assert status == 202, (status, body)
    status, body = call(conn, "POST", "/v1/auth/signin", credentials)
    assert status == 200, (status, body)
    return body["accessToken"]


conn = connect()
reader, writer, refused = signup(conn), signup(conn), signup(conn)
status, _ = call(conn, "POST", "/v1/me/consents", {"kind": "healthData", "version": "2026-11", "granted": True}, reader)
assert status in (200, 201), status
now = datetime.now(timezone.utc)
samples = [{"id": str(uuid.uuid4()), "type": "heartRate", "value": 60 + i % 40, "unit": "count/min",
            "start": (now - timedelta(minutes=i + 1)).strftime("%Y-%m-%dT%H:%M:%SZ"), "sourceId": "bench"} for i in range(100)]
status, _ = call(conn, "POST", "/v1/health/samples", {"samples": samples}, reader)
assert status == 200, status
status, body = call(conn, "GET", "/v1/workouts?limit=1", token=writer)
workout = body["items"][0]["id"]


def write_latencies(duration):
    c = connect()
    latencies = []
    end = time.monotonic() + duration
    while time.monotonic() < end:
        started = time.monotonic()
        status, _ = call(c, "POST", "/v1/history", {
            "workoutId": workout, "completedAt": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), "duration": 30, "rating": 4,
            "energyBefore": 3, "energyAfter": 4}, writer)
        latencies.append((time.monotonic() - started) * 1000)
        assert status == 201, status
    return latencies


def flood(token, expected, stop, counts):
    c = connect()
    n = 0
    while not stop.is_set():
        status, _ = call(c, "GET", "/v1/health/samples?limit=100", token=token)
        assert status == expected, status
        n += 1
    counts.append(n)


def report(label, latencies, reads=None):
    latencies.sort()
    p = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))]
    extra = f"; {reads} reads ({reads / seconds:.0f}/s)" if reads is not None else ""
    print(f"{label:<44} workout logs: {len(latencies):>5} ({len(latencies) / seconds:.0f}/s) p50 {p(0.5):6.1f} ms p99 {p(0.99):6.1f} ms{extra}")


write_latencies(1)  # warm-up
report("alone", write_latencies(seconds))
for label, token, expected in [(f"with {readers} concurrent reads by another user", reader, 200),
                               (f"with {readers} concurrent refused reads", refused, 403)]:
    stop, counts = threading.Event(), []
    threads = [threading.Thread(target=flood, args=(token, expected, stop, counts)) for _ in range(readers)]
    for t in threads:
        t.start()
    time.sleep(0.5)
    latencies = write_latencies(seconds)
    stop.set()
    for t in threads:
        t.join()
    report(label, latencies, sum(counts))
status, body = call(conn, "GET", "/v1/me/audit?limit=5", token=refused)
print(f"audit entries of the refused user right after the flood: {len(body['items'])} (written at the next minute's flush)")
