"""A fresh PostgreSQL database per benchmark run (imported by bench-*.py): created on the server a
postgres://… URL names, dropped at the end, through `psql` (which must be installed)."""
import contextlib
import os
import shutil
import subprocess
import urllib.parse
import uuid


class PostgresServer:
    """The server of a postgres://user[:password]@host[:port]/database[?tlsmode=…|sslmode=…] URL, reached through psql."""

    def __init__(self, url):
        parsed = urllib.parse.urlsplit(url)
        if parsed.scheme not in ("postgres", "postgresql"):
            raise SystemExit(f"FITBASE_DATABASE_URL is not a postgres:// URL: {url}")
        psql = shutil.which("psql")
        if not psql:
            raise SystemExit("psql is needed to create and drop the run's database: apt-get install postgresql-client")
        self.parsed = parsed
        self.env = dict(os.environ)
        if parsed.password:
            self.env["PGPASSWORD"] = urllib.parse.unquote(parsed.password)
        query = urllib.parse.parse_qs(parsed.query)
        mode = (query.get("sslmode") or query.get("tlsmode") or [""])[0]  # FitBase takes either; psql knows sslmode
        if mode:
            self.env["PGSSLMODE"] = mode
        self.argv = [psql, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", parsed.hostname or "127.0.0.1",
                     "-p", str(parsed.port or 5432), "-U", urllib.parse.unquote(parsed.username or "postgres")]

    def query(self, sql, database=None):
        """Runs SQL in DATABASE (default: the URL's) and returns psql's unaligned output."""
        done = subprocess.run(self.argv + ["-d", database or self.parsed.path.lstrip("/") or "postgres", "-c", sql],
                              env=self.env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
        if done.returncode != 0:
            raise SystemExit(f"psql: {sql}: {done.stderr.strip()}")
        return done.stdout.strip()

    def url(self, database):
        """The given URL with its database replaced (user, host, port and TLS mode kept)."""
        p = self.parsed
        return urllib.parse.urlunsplit((p.scheme, p.netloc, "/" + database, p.query, ""))

    @contextlib.contextmanager
    def fresh_database(self, prefix):
        """Creates PREFIX_<pid>_<random>, yields its name, and drops it (disconnecting what is still connected)."""
        name = f"{prefix}_{os.getpid()}_{uuid.uuid4().hex[:8]}"
        self.query(f'CREATE DATABASE "{name}"')
        try:
            yield name
        finally:
            self.query(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def version(self):
        return self.query("SHOW server_version")
