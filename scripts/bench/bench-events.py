#!/usr/bin/env python3
"""Realtime figures against running FitBase servers (see scripts/bench/bench-events.sh).

1. Latency: a group of 10 members, each with SUBSCRIBERS/10 open event streams (devices), spread over the servers in
   turn; one member logs ROUNDS workouts one after another through the first server; for each, the time from sending
   POST /v1/history to the new leaderboard event reaching each of the SUBSCRIBERS streams (p50, p99 over all
   deliveries, and per server).
2. Idle streams: CONNECTIONS more streams held open at once on the first server; writes READY_FILE once they are all
   open and holds them until DONE_FILE exists (at most 60 s), so the caller can measure the server meanwhile.

    bench-events.py SERVER_URL[,SERVER_URL…] [SUBSCRIBERS] [ROUNDS] [CONNECTIONS] [READY_FILE] [DONE_FILE]
"""
import asyncio
import json
import statistics
import sys
import time
import uuid
from urllib.parse import urlparse

import os

servers = [(u.hostname, u.port) for u in map(urlparse, sys.argv[1].split(","))]
subscribers = int(sys.argv[2]) if len(sys.argv) > 2 else 100
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 30
capacity = int(sys.argv[4]) if len(sys.argv) > 4 else 1000
HOST, PORT = servers[0]


async def request(method, path, body=None, token=None):
    reader, writer = await asyncio.open_connection(HOST, PORT)
    payload = json.dumps(body).encode() if body is not None else b""
    head = f"{method} {path} HTTP/1.1\r\nHost: {HOST}\r\nConnection: close\r\nContent-Length: {len(payload)}\r\n"
    if body is not None:
        head += "Content-Type: application/json\r\n"
    if token:
        head += f"Authorization: Bearer {token}\r\n"
    writer.write(head.encode() + b"\r\n" + payload)
    await writer.drain()
    raw = await reader.read()
    writer.close()
    status = int(raw.split(b" ", 2)[1])
    headers, _, rest = raw.partition(b"\r\n\r\n")
    if b"transfer-encoding: chunked" in headers.lower():
        data, rest2 = b"", rest
        while rest2:
            size_line, _, rest2 = rest2.partition(b"\r\n")
            size = int(size_line, 16)
            if size == 0:
                break
            data, rest2 = data + rest2[:size], rest2[size + 2:]
        rest = data
    if status >= 300:
        raise SystemExit(f"{method} {path}: {status} {rest[:200]!r}")
    return json.loads(rest) if rest else None


class Round:
    """The event the streams wait for now, and when each stream received it (no polling: each stream checks what it
    reads, and the last one wakes the round)."""
    marker, arrivals, done = None, {}, None


class Stream:
    """One open /v1/events stream; records when the round's event arrives on it."""

    def __init__(self, token, server=0):
        self.token, self.server, self.ready = token, server, asyncio.Event()

    async def run(self):
        host, port = servers[self.server]
        reader, writer = await asyncio.open_connection(host, port)
        writer.write(f"GET /v1/events HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {self.token}\r\nAccept: text/event-stream\r\n\r\n".encode())
        await writer.drain()
        await reader.readuntil(b"\r\n\r\n")
        # The raw bytes are searched (each event is one chunk, so chunk framing never splits an event; the tail of the
        # previous read covers one split by TCP): the least work per read, so the client measures the server.
        tail = b""
        try:
            while data := await reader.read(65536):
                window = tail + data
                if not self.ready.is_set() and b"retry:" in window:
                    self.ready.set()
                if Round.marker and self not in Round.arrivals and Round.marker in window:
                    Round.arrivals[self] = time.perf_counter()
                    if len(Round.arrivals) == subscribers:
                        Round.done.set()
                tail = window[-256:]
        except (ConnectionError, asyncio.CancelledError):
            pass
        writer.close()


async def main():
    password = "benchmark password"
    members = []
    for index in range(10):
        credentials = {"email": f"ev-{uuid.uuid4().hex[:8]}@example.com", "password": password}
        await request("POST", "/v1/auth/signup", credentials)
        signed = await request("POST", "/v1/auth/signin", credentials)
        members.append((signed["user"]["id"], signed["accessToken"]))
    workouts = await request("GET", "/v1/workouts?limit=1")
    workout = workouts["items"][0]["id"]
    group = await request("POST", "/v1/groups", {"name": "Bench"}, members[0][1])
    invite = await request("POST", f"/v1/groups/{group['id']}/invites", None, members[0][1])
    for _, token in members[1:]:
        await request("POST", f"/v1/invites/{invite['token']}/accept", None, token)

    streams = [Stream(members[i % 10][1], (i // 10) % len(servers)) for i in range(subscribers)]
    tasks = [asyncio.create_task(s.run()) for s in streams]
    await asyncio.wait_for(asyncio.gather(*(s.ready.wait() for s in streams)), 60)
    logger_id, logger_token = members[1]
    latencies, by_server, answered = [], [[] for _ in servers], []
    for k in range(1, rounds + 1):
        Round.marker, Round.arrivals, Round.done = f'"userId":"{logger_id}","value":{k}}}'.encode(), {}, asyncio.Event()
        sent = time.perf_counter()
        await request("POST", "/v1/history", {"workoutId": workout, "completedAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 60)), "duration": 30}, logger_token)
        answered.append(time.perf_counter() - sent)
        try:
            await asyncio.wait_for(Round.done.wait(), 10)
        except asyncio.TimeoutError:
            raise SystemExit(f"round {k}: only {len(Round.arrivals)} of {subscribers} streams got the event")
        for stream, arrived in Round.arrivals.items():
            latencies.append(arrived - sent)
            by_server[stream.server].append(arrived - sent)
        Round.marker = None
        await asyncio.sleep(0.05)
    latencies.sort()
    print(f"latency, workout log → leaderboard event on {subscribers} streams ({rounds} rounds, {len(latencies)} deliveries): "
          f"p50 {statistics.median(latencies) * 1000:.1f} ms, p99 {latencies[int(len(latencies) * 0.99) - 1] * 1000:.1f} ms, "
          f"max {latencies[-1] * 1000:.1f} ms")
    answered.sort()
    print(f"  the log request itself (until its answer): p50 {statistics.median(answered) * 1000:.1f} ms, max {answered[-1] * 1000:.1f} ms")
    if len(servers) > 1:
        for index, values in enumerate(by_server):
            values.sort()
            print(f"  on server {index + 1} ({len(values) // rounds} streams): p50 {statistics.median(values) * 1000:.1f} ms, "
                  f"p99 {values[int(len(values) * 0.99) - 1] * 1000:.1f} ms")

    extra = [Stream(members[i % 10][1]) for i in range(capacity)]
    extra_tasks = []
    for start in range(0, capacity, 200):
        batch = extra[start:start + 200]
        extra_tasks += [asyncio.create_task(s.run()) for s in batch]
        await asyncio.wait_for(asyncio.gather(*(s.ready.wait() for s in batch)), 60)
    print(f"idle: {capacity} more event streams open at once on server 1 ({subscribers + capacity} in all)")
    open(sys.argv[5] if len(sys.argv) > 5 else "/dev/null", "w").write("ready")
    done = sys.argv[6] if len(sys.argv) > 6 else None
    for _ in range(600):
        if not done or os.path.exists(done):
            break
        await asyncio.sleep(0.1)
    await asyncio.sleep(0.5)
    for task in tasks + extra_tasks:
        task.cancel()


try:
    import uvloop  # optional (pip install uvloop): a faster event loop, so the client's own time counts for less

    uvloop.install()
except ImportError:
    pass
asyncio.run(main())
