#!/usr/bin/env python3
"""Realtime figures against a running FitBase server (see scripts/bench-events.sh).

1. Latency: a group of 10 members, each with SUBSCRIBERS/10 open event streams (devices); one member logs ROUNDS
   workouts one after another; for each, the time from sending POST /v1/history to the new leaderboard event
   reaching each of the SUBSCRIBERS streams (p50, p99 over all deliveries).
2. Capacity: CONNECTIONS more streams held open at once; reports how many were open and streaming.

    bench-events.py SERVER_URL [SUBSCRIBERS] [ROUNDS] [CONNECTIONS]
"""
import asyncio
import json
import statistics
import sys
import time
import uuid
from urllib.parse import urlparse

url = urlparse(sys.argv[1])
subscribers = int(sys.argv[2]) if len(sys.argv) > 2 else 100
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 30
capacity = int(sys.argv[4]) if len(sys.argv) > 4 else 1000
HOST, PORT = url.hostname, url.port


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


class Stream:
    """One open /v1/events stream; records when each event arrives."""

    def __init__(self, token):
        self.token, self.arrivals, self.ready = token, [], asyncio.Event()

    async def run(self):
        reader, writer = await asyncio.open_connection(HOST, PORT)
        writer.write(f"GET /v1/events HTTP/1.1\r\nHost: {HOST}\r\nAuthorization: Bearer {self.token}\r\nAccept: text/event-stream\r\n\r\n".encode())
        await writer.drain()
        await reader.readuntil(b"\r\n\r\n")
        buffer = b""
        try:
            while True:
                size = int((await reader.readline()).strip() or b"0", 16)
                chunk = await reader.readexactly(size + 2)
                buffer += chunk[:-2]
                while b"\n\n" in buffer:
                    block, buffer = buffer.split(b"\n\n", 1)
                    if block.startswith(b"retry:"):
                        self.ready.set()
                    elif b"event: leaderboard" in block:
                        self.arrivals.append((time.perf_counter(), block))
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
            writer.close()


async def main():
    password = "benchmark password"
    members = []
    for index in range(10):
        signed = await request("POST", "/v1/auth/signup", {"email": f"ev-{uuid.uuid4().hex[:8]}@example.com", "password": password})
        members.append((signed["user"]["id"], signed["accessToken"]))
    workouts = await request("GET", "/v1/workouts?limit=1")
    workout = workouts["items"][0]["id"]
    group = await request("POST", "/v1/groups", {"name": "Bench"}, members[0][1])
    invite = await request("POST", f"/v1/groups/{group['id']}/invites", None, members[0][1])
    for _, token in members[1:]:
        await request("POST", f"/v1/invites/{invite['token']}/accept", None, token)

    streams = [Stream(members[i % 10][1]) for i in range(subscribers)]
    tasks = [asyncio.create_task(s.run()) for s in streams]
    await asyncio.wait_for(asyncio.gather(*(s.ready.wait() for s in streams)), 60)
    logger_id, logger_token = members[1]
    latencies = []
    for k in range(1, rounds + 1):
        marker = f'"userId":"{logger_id}","value":{k}}}'.encode()
        sent = time.perf_counter()
        await request("POST", "/v1/history", {"workoutId": workout, "completedAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 60)), "duration": 30}, logger_token)
        deadline = time.perf_counter() + 10
        while time.perf_counter() < deadline:
            got = [next((t for t, block in s.arrivals if marker in block), None) for s in streams]
            if all(got):
                latencies += [t - sent for t in got]
                break
            await asyncio.sleep(0.005)
        else:
            raise SystemExit(f"round {k}: only {sum(1 for g in got if g)} of {subscribers} streams got the event")
    latencies.sort()
    print(f"latency, workout log → leaderboard event on {subscribers} streams ({rounds} rounds, {len(latencies)} deliveries): "
          f"p50 {statistics.median(latencies) * 1000:.1f} ms, p99 {latencies[int(len(latencies) * 0.99) - 1] * 1000:.1f} ms, "
          f"max {latencies[-1] * 1000:.1f} ms")

    extra = [Stream(members[i % 10][1]) for i in range(capacity)]
    extra_tasks = []
    for start in range(0, capacity, 200):
        batch = extra[start:start + 200]
        extra_tasks += [asyncio.create_task(s.run()) for s in batch]
        await asyncio.wait_for(asyncio.gather(*(s.ready.wait() for s in batch)), 60)
    print(f"capacity: {subscribers + capacity} event streams open at once")
    open(sys.argv[5] if len(sys.argv) > 5 else "/dev/null", "w").write("ready")
    await asyncio.sleep(2)
    for task in tasks + extra_tasks:
        task.cancel()


asyncio.run(main())
