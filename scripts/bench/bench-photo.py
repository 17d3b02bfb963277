"""Profile-photo uploads against a running server (see bench-photo.sh): latency and rate per kind of photo, then the
server's peak RSS around hostile uploads. Arguments: URL COUNT PID."""
import io
import statistics
import struct
import sys
import threading
import time
import urllib.parse
import uuid

from PIL import Image, ImageDraw
import pillow_heif

from benchhttp import call, connect

pillow_heif.register_heif_opener()
url = urllib.parse.urlparse(sys.argv[1])
count = int(sys.argv[2])
pid = sys.argv[3]


def peak_rss_mb():
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmHWM"):
            return int(line.split()[1]) // 1024
    return 0


def rss_mb():
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS"):
            return int(line.split()[1]) // 1024
    return 0


def picture(width, height):
    """A photo-like picture: gradients and lines, so that codecs have real work."""
    image = Image.linear_gradient("L").resize((width, height)).convert("RGB")
    draw = ImageDraw.Draw(image)
    for x in range(0, width, 37):
        draw.line([(x, 0), (width - x, height)], fill=(x % 255, (x * 3) % 255, (x * 7) % 255), width=3)
    return image


def encoded(image, kind):
    out = io.BytesIO()
    if kind == "jpeg":
        image.save(out, "JPEG", quality=90)
    elif kind == "png":
        image.save(out, "PNG")
    else:
        image.save(out, "HEIF", quality=60)
    return out.getvalue()


def sign_up(conn):
    """A new account's access token (a sign-up answers 202 with no session on newer servers: then a sign-in)."""
    credentials = {"email": f"photo-{uuid.uuid4()}@example.com", "password": "correct horse battery"}
    answer = call(conn, "POST", "/v1/auth/signup", credentials)
    if "accessToken" in answer:
        return answer["accessToken"]
    return call(conn, "POST", "/v1/auth/signin", credentials)["accessToken"]


def upload(conn, token, body):
    conn.request("PUT", "/v1/me/photo", body=body, headers={"Authorization": "Bearer " + token, "Content-Type": "application/octet-stream"})
    response = conn.getresponse()
    response.read()
    return response.status


def run(kind, body, workers):
    times, statuses = [], []
    lock = threading.Lock()

    def worker(n):
        conn = connect(url, 120)
        token = sign_up(conn)
        for _ in range(n):
            started = time.perf_counter()
            status = upload(conn, token, body)
            with lock:
                times.append(time.perf_counter() - started)
                statuses.append(status)

    started = time.perf_counter()
    threads = [threading.Thread(target=worker, args=(count // workers,)) for _ in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    times.sort()
    p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
    print(f"{kind:>5} {len(body) // 1024:>6} KB  x{workers}: {len(times) / elapsed:6.1f} uploads/s  "
          f"p50 {statistics.median(times) * 1000:7.1f} ms  p99 {p99 * 1000:7.1f} ms  statuses {sorted(set(statuses))}")


photos = {
    "jpeg": encoded(picture(4000, 3000), "jpeg"),
    "png": encoded(picture(4000, 3000), "png"),
    "heic": encoded(picture(8000, 6000), "heic"),
}
print(f"server RSS at start: {rss_mb()} MB (peak {peak_rss_mb()} MB)")
for kind, body in photos.items():
    for workers in (1, 4):
        run(kind, body, workers)
print(f"server RSS after uploads: {rss_mb()} MB (peak {peak_rss_mb()} MB)")


def segment(marker, payload):
    return bytes([0xFF, marker]) + struct.pack(">H", len(payload) + 2) + payload


def progressive_bomb():
    """First frame 30000×30000 (progressive), a scan, then a second frame of 300×300."""
    tables = segment(0xDB, b"\0" + b"\1" * 64)
    huffman = segment(0xC4, b"\0\1" + b"\0" * 15 + b"\0") + segment(0xC4, b"\x10\1" + b"\0" * 15 + b"\0")
    first = segment(0xC2, bytes([8]) + struct.pack(">HH", 30000, 30000) + bytes([1, 1, 0x11, 0]))
    last = segment(0xC0, bytes([8]) + struct.pack(">HH", 300, 300) + bytes([1, 1, 0x11, 0]))
    scan = segment(0xDA, bytes([1, 1, 0, 0, 0, 0])) + b"\0" * 64
    return b"\xff\xd8" + tables + huffman + first + scan + last + scan + b"\xff\xd9"


def png_7000():
    out = io.BytesIO()
    Image.new("1", (7000, 7000), 1).save(out, "PNG", optimize=True)
    return out.getvalue()


conn = connect(url, 300)
token = sign_up(conn)
before = peak_rss_mb()
for name, body in [("progressive JPEG bomb", progressive_bomb()), ("7000x7000 1-bit PNG", png_7000())]:
    started = time.perf_counter()
    status = upload(conn, token, body)
    print(f"{name} ({len(body)} bytes): {status} in {(time.perf_counter() - started) * 1000:.0f} ms; server RSS {rss_mb()} MB, peak {peak_rss_mb()} MB (was {before} MB)")
