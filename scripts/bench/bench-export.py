#!/usr/bin/env python3
"""The export's server memory (see scripts/bench/bench-export.sh).

    bench-export.py SERVER_URL SERVER_PID SAMPLES
"""
import json
import sys
import threading
import time
import uuid
from datetime import datetime, timedelta, timezone
from urllib.parse import urlparse

import benchhttp
from benchhttp import call

url = urlparse(sys.argv[1])
pid = int(sys.argv[2])
total = int(sys.argv[3])


def connect():
    return benchhttp.connect(url, timeout=600)


def rss_kib():
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


conn = connect()
credentials = {"email": f"export-{uuid.uuid4().hex[:8]}@example.com", "password": "benchmark password"}
call(conn, "POST", "/v1/auth/signup", credentials)
signed = call(conn, "POST", "/v1/auth/signin", credentials)
session = {"token": signed["accessToken"], "refresh": signed["refreshToken"], "at": time.monotonic()}
lock = threading.Lock()
call(conn, "POST", "/v1/me/consents", {"kind": "healthData", "version": "bench", "granted": True}, session["token"])


def token(conn):
    with lock:
        if time.monotonic() - session["at"] > 600:
            fresh = call(conn, "POST", "/v1/auth/refresh", {"refreshToken": session["refresh"]})
            session.update(token=fresh["accessToken"], refresh=fresh["refreshToken"], at=time.monotonic())
        return session["token"]


start = datetime(2024, 1, 1, tzinfo=timezone.utc)
offsets = list(range(0, total, 1000))


def worker():
    worker_conn = connect()
    while True:
        with lock:
            if not offsets:
                return
            first = offsets.pop(0)
        samples = [{
            "id": str(uuid.uuid4()), "type": "heartRate", "value": 55 + (minute * 7919) % 70, "unit": "count/min",
            "start": (start + timedelta(minutes=minute)).strftime("%Y-%m-%dT%H:%M:%SZ"), "sourceId": "com.apple.health.8F3A",
            "device": "Apple Watch", "metadata": {"HKMetadataKeyHeartRateMotionContext": "1"},
        } for minute in range(first, min(first + 1000, total))]
        result = call(worker_conn, "POST", "/v1/health/samples", {"samples": samples}, token(worker_conn))
        if result["created"] != len(samples):
            raise SystemExit(f"batch at {first}: {result['created']} created of {len(samples)}")


began = time.perf_counter()
threads = [threading.Thread(target=worker) for _ in range(2)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print(f"uploaded {total:,} samples in {time.perf_counter() - began:.0f} s")

time.sleep(2)
before = rss_kib()
peak = [before]
done = threading.Event()


def sample_rss():
    while not done.is_set():
        peak[0] = max(peak[0], rss_kib())
        time.sleep(0.02)


sampler = threading.Thread(target=sample_rss)
sampler.start()
began = time.perf_counter()
export_conn = connect()
export_conn.request("GET", "/v1/me/export", headers={"Authorization": "Bearer " + token(export_conn)})
response = export_conn.getresponse()
if response.status != 200:
    raise SystemExit(f"export answered {response.status}: {response.read()[:300]!r}")
received = bytearray()
while chunk := response.read(1 << 20):
    received += chunk
elapsed = time.perf_counter() - began
done.set()
sampler.join()
document = json.loads(received)
exported = len(document["sections"]["healthSamples"])
print(f"export: {len(received) / 1e6:,.0f} MB in {elapsed:.1f} s, {exported:,} samples"
      f"{'' if exported == total else f' (expected {total:,})'}")
print(f"server RSS: {before / 1024:.0f} MiB before the export, {peak[0] / 1024:.0f} MiB at most during it")
if exported != total:
    sys.exit(1)
