#!/usr/bin/env python3
"""Health data figures against a running FitBase server (see scripts/bench/bench-health.sh).

Signs up a user, grants the healthData consent, uploads DAYS days of minute-level heart rate in batches of 1,000
samples (HealthKit's shape: count/min, a source id, a device, metadata) and reports the ingest throughput; then
times GET /v1/health/summary over the whole range (by day and by week) and over the last week.

    bench-health.py SERVER_URL [DAYS] [CONNECTIONS]
"""
import json
import statistics
import sys
import threading
import time
import uuid
from datetime import datetime, timedelta, timezone
from urllib.parse import urlparse

import benchhttp
from benchhttp import call

url = urlparse(sys.argv[1])
days = int(sys.argv[2]) if len(sys.argv) > 2 else 365
connections = int(sys.argv[3]) if len(sys.argv) > 3 else 2


def connect():
    return benchhttp.connect(url, timeout=120)


conn = connect()
email = f"health-bench-{uuid.uuid4().hex[:8]}@example.com"
call(conn, "POST", "/v1/auth/signup", {"email": email, "password": "benchmark password"})
signed = call(conn, "POST", "/v1/auth/signin", {"email": email, "password": "benchmark password"})
call(conn, "POST", "/v1/me/consents", {"kind": "healthData", "version": "bench", "granted": True}, signed["accessToken"])

end = datetime.now(timezone.utc).replace(second=0, microsecond=0)
start = end - timedelta(days=days)
minutes = days * 24 * 60


def batch(first):
    samples = []
    for minute in range(first, min(first + 1000, minutes)):
        at = start + timedelta(minutes=minute)
        samples.append({
            "id": str(uuid.uuid4()), "type": "heartRate", "value": 55 + (minute * 7919) % 70, "unit": "count/min",
            "start": at.strftime("%Y-%m-%dT%H:%M:%SZ"), "sourceId": "com.apple.health.8F3A", "device": "Apple Watch",
            "metadata": {"HKMetadataKeyHeartRateMotionContext": "1"},
        })
    return samples


# Access tokens live 15 minutes; a year of uploads may take longer, so the session is refreshed every 10.
session = {"token": signed["accessToken"], "refresh": signed["refreshToken"], "at": time.monotonic()}
lock = threading.Lock()


def current_token(conn):
    with lock:
        if time.monotonic() - session["at"] > 600:
            fresh = call(conn, "POST", "/v1/auth/refresh", {"refreshToken": session["refresh"]})
            session.update(token=fresh["accessToken"], refresh=fresh["refreshToken"], at=time.monotonic())
        return session["token"]
# The bodies are written before the clock starts, so the figure is the server's (building 1,000 samples in Python
# takes about as long as the server takes to store them).
bodies = {first: json.dumps({"samples": batch(first)}).encode() for first in range(0, minutes, 1000)}
offsets = list(range(0, minutes, 1000))
latencies = []


def worker():
    worker_conn = connect()
    while True:
        with lock:
            if not offsets:
                return
            first = offsets.pop(0)
        began = time.perf_counter()
        result = call(worker_conn, "POST", "/v1/health/samples", bodies[first], current_token(worker_conn))
        took = time.perf_counter() - began
        with lock:
            latencies.append(took)
        expected = min(1000, minutes - first)
        if result["created"] != expected:
            raise SystemExit(f"batch at {first}: {result['created']} created of {expected}")


began = time.perf_counter()
client_cpu = time.process_time()
threads = [threading.Thread(target=worker) for _ in range(connections)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
elapsed = time.perf_counter() - began
client_cpu = time.process_time() - client_cpu
print(f"ingest: {minutes:,} heart-rate samples in {len(latencies)} batches of 1,000 over {connections} connections: "
      f"{elapsed:.1f} s, {minutes / elapsed:,.0f} samples/s; per batch p50 {statistics.median(latencies) * 1000:.0f} ms, "
      f"p99 {sorted(latencies)[int(len(latencies) * 0.99) - 1] * 1000:.0f} ms (this client used {client_cpu:.1f} s of CPU meanwhile)")


def timed(path, runs):
    took = []
    for _ in range(runs):
        began = time.perf_counter()
        body = call(conn, "GET", path, token=current_token(conn))
        took.append(time.perf_counter() - began)
    return body, took


iso = "%Y-%m-%dT%H:%M:%SZ"
for label, query, runs in [
    (f"{days} days by day", f"from={start.strftime(iso)}&to={end.strftime(iso)}&bucket=day", 5),
    (f"{days} days by week", f"from={start.strftime(iso)}&to={end.strftime(iso)}&bucket=week", 5),
    ("last 7 days by day", f"from={(end - timedelta(days=7)).strftime(iso)}&to={end.strftime(iso)}&bucket=day", 20),
]:
    body, took = timed(f"/v1/health/summary?type=heartRate&{query}", runs)
    counted = sum(bucket["sampleCount"] for bucket in body["buckets"])
    print(f"summary, {label}: {len(body['buckets'])} buckets over {counted:,} samples; "
          f"median {statistics.median(took) * 1000:.0f} ms, best {min(took) * 1000:.0f} ms ({runs} runs)")
