#!/usr/bin/env python3
"""What SQLite alone needs to store a year of minute-level heart rate the way FitBase stores health samples.

Inserts DAYS days of samples (one a minute, 1,000 per transaction, 250 rows per statement, as the server does) into a
table laid out like `health_samples` (id: a random UUID as upper-case text), WAL mode, synchronous=NORMAL, a 64 MiB
cache, with a background thread checkpointing PASSIVE every 25 ms and copying the last tail while holding the writer
lock once the log is past 32,768 pages (as `SQLiteCheckpointer` does). Prints rows/s and the writer's time per
transaction: the floor under `scripts/bench/bench-health.sh`, whose uploads take turns at the one writer.

    bench-sqlite-floor.py [DAYS] [LAYOUT] [PAGE_SIZE]

LAYOUT: `rowid` (FitBase's: rowid table, unique id, (user_id, type, start_at), unique (user_id, seq)), `by-time`
(WITHOUT ROWID, clustered on (user_id, type, start_at, id)) or `by-seq` (WITHOUT ROWID, clustered on (user_id, seq)).
"""
import os
import shutil
import sqlite3
import sys
import tempfile
import threading
import time
import uuid

days = int(sys.argv[1]) if len(sys.argv) > 1 else 365
layout = sys.argv[2] if len(sys.argv) > 2 else "rowid"
page_size = int(sys.argv[3]) if len(sys.argv) > 3 else 4096
path = os.path.join(tempfile.mkdtemp(prefix="fitbase-floor."), "floor.sqlite")

db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
db.execute(f"PRAGMA page_size={page_size}")
db.execute("PRAGMA journal_mode=WAL")
db.execute("PRAGMA synchronous=NORMAL")
db.execute("PRAGMA cache_size=-65536")
db.execute("PRAGMA wal_autocheckpoint=0")
db.execute("PRAGMA temp_store=MEMORY")
columns = ("id TEXT NOT NULL, user_id TEXT NOT NULL, type TEXT NOT NULL, start_at REAL NOT NULL, end_at REAL, "
           "key_id TEXT NOT NULL, sealed BLOB NOT NULL, created_at REAL NOT NULL, seq INTEGER NOT NULL, "
           "version INTEGER NOT NULL, updated_at REAL")
if layout == "rowid":
    db.execute(f"CREATE TABLE s ({columns}, PRIMARY KEY (id))")
    db.execute("CREATE INDEX s_time ON s (user_id, type, start_at)")
    db.execute("CREATE UNIQUE INDEX s_seq ON s (user_id, seq)")
elif layout == "by-time":
    db.execute(f"CREATE TABLE s ({columns}, PRIMARY KEY (user_id, type, start_at, id)) WITHOUT ROWID")
    db.execute("CREATE UNIQUE INDEX s_id ON s (id)")
    db.execute("CREATE UNIQUE INDEX s_seq ON s (user_id, seq)")
elif layout == "by-seq":
    db.execute(f"CREATE TABLE s ({columns}, PRIMARY KEY (user_id, seq)) WITHOUT ROWID")
    db.execute("CREATE UNIQUE INDEX s_id ON s (id)")
    db.execute("CREATE INDEX s_time ON s (user_id, type, start_at)")
else:
    raise SystemExit(f"unknown layout {layout}")

user, key, t0 = str(uuid.uuid4()).upper(), str(uuid.uuid4()), 1.7e9
count = days * 1440
rows = [(str(uuid.uuid4()).upper(), user, "heartRate", t0 + i * 60, None, key, os.urandom(110), t0, i + 1, 1, t0)
        for i in range(count)]
writer = threading.Lock()
done = False


def checkpointer():
    connection = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    previous, deferrals = 0, 0
    while not done:
        time.sleep(0.025)
        _, log, _ = connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        tail = log - previous if log >= previous else log
        previous = log
        if log >= 32768 and tail > 0:
            if tail <= 2048 or deferrals >= 4:
                with writer:
                    connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
                deferrals = 0
            else:
                deferrals += 1


threading.Thread(target=checkpointer, daemon=True).start()
statement = ("INSERT INTO s (id, user_id, type, start_at, end_at, key_id, sealed, created_at, seq, version, updated_at) "
             "VALUES " + ", ".join(["(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"] * 250) + " ON CONFLICT DO NOTHING RETURNING id")
began, inside, transactions = time.perf_counter(), 0.0, 0
for first in range(0, count - count % 1000, 1000):
    with writer:
        start = time.perf_counter()
        db.execute("BEGIN IMMEDIATE")
        for chunk in range(first, first + 1000, 250):
            db.execute(statement, [value for row in rows[chunk:chunk + 250] for value in row]).fetchall()
        db.execute("COMMIT")
        inside += time.perf_counter() - start
        transactions += 1
elapsed = time.perf_counter() - began
done = True
db.close()
shutil.rmtree(os.path.dirname(path), ignore_errors=True)
print(f"{layout}, {page_size}-byte pages: {transactions * 1000:,} rows in {elapsed:.1f} s, "
      f"{transactions * 1000 / elapsed:,.0f} rows/s; the writer {inside / transactions * 1000:.1f} ms per 1,000 rows")
