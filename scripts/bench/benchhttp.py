"""The JSON-over-HTTP calls the benchmark scripts make against a FitBase server (imported by bench-*.py)."""
import http.client
import json


def connect(url, timeout):
    """A keep-alive connection to the server at `url` (a urllib.parse result)."""
    return http.client.HTTPConnection(url.hostname, url.port, timeout=timeout)


def call(conn, method, path, body=None, token=None):
    """Sends `body` (JSON, or bytes as they are) and returns the decoded answer; any status from 300 ends the run."""
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = "Bearer " + token
    if body is not None and not isinstance(body, bytes):
        body = json.dumps(body).encode()
    conn.request(method, path, body=body, headers=headers)
    response = conn.getresponse()
    data = response.read()
    if response.status >= 300:
        raise SystemExit(f"{method} {path} answered {response.status}: {data[:300]!r}")
    return json.loads(data) if data else None
