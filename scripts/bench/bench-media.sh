#!/usr/bin/env bash
# Serves a 50 MB video in random 1 MiB ranges, and a workout thumbnail whole, from a release `fitbase serve`'s media
# links (data directory), and the same files from Debian's nginx on the same disk, with wrk; then times profile photo
# uploads (each makes its thumbnail) and serves the photo's thumbnail link.
#
#   scripts/bench/bench-media.sh [duration-seconds] [connections]
#   FITBASE_BENCH_BIN=path/to/release/fitbase FITBASE_BENCH_PERF=/tmp/video.perf scripts/bench/bench-media.sh 10 16
#   FITBASE_BENCH_ROUNDS=5 scripts/bench/bench-media.sh 10 16   (video rounds; 3 by default)
#
# Needs wrk and nginx (apt-get install wrk nginx-light). Prints each server's requests and bytes a second, and
# FitBase's share of nginx's.
set -euo pipefail
cd "$(dirname "$0")/../.."
duration="${1:-15}"
connections="${2:-16}"
# Video rounds (each a FitBase run and an nginx run): the figure is the median of the rounds' ratios.
rounds="${FITBASE_BENCH_ROUNDS:-3}"
command -v nginx >/dev/null || { echo "nginx is needed: apt-get install nginx-light"; exit 1; }
export FITBASE_DEMO_CATALOG=true
# shellcheck source=scripts/bench/bench-server.sh
source scripts/bench/bench-server.sh
# CPU time (clock ticks) the processes have used so far.
cpu_ticks() { local total=0 p; for p in "$@"; do total=$((total + $(awk '{print $14 + $15}' "/proc/$p/stat"))); done; echo "$total"; }
nginx_pid=""
trap '[ -n "$nginx_pid" ] && kill "$nginx_pid" 2>/dev/null; cleanup; true' EXIT

# An admin uploads the files through the API.
email="bench-$RANDOM@example.com"
curl -fsS -H 'Content-Type: application/json' -d "{\"email\":\"$email\",\"password\":\"correct horse battery\"}" "$url/v1/auth/signup" >/dev/null
"$bin" admin grant-role "$email" admin --data-dir "$work/data" >/dev/null
session=$(curl -fsS -H 'Content-Type: application/json' -d "{\"email\":\"$email\",\"password\":\"correct horse battery\"}" "$url/v1/auth/signin")
token=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["accessToken"])' <<<"$session")
user=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["user"]["id"])' <<<"$session")
workout=$(curl -fsS "$url/v1/workouts?limit=1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["items"][0]["id"])')
python3 - "$work/video.mp4" "$work/thumbnail.jpg" "$work/photo.png" <<'PY'
import os, struct, sys, zlib
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack(">I", 20) + b"ftypisom" + struct.pack(">I", 512) + b"isom")
    f.write(os.urandom(50 * 1000 * 1000 - 20))
# A 60 KB baseline-JPEG-shaped file (what a thumbnail weighs).
def seg(marker, payload): return bytes([0xFF, marker]) + struct.pack(">H", len(payload) + 2) + payload
jpeg = b"\xFF\xD8" + seg(0xE0, b"JFIF\0\1\1\0\0\1\0\1\0\0") + seg(0xDB, b"\0" + b"\1" * 64)
jpeg += seg(0xC0, b"\x08" + struct.pack(">HH", 360, 640) + b"\x01\x01\x11\x00") + seg(0xC4, b"\0\1" + b"\0" * 15 + b"\0")
jpeg += seg(0xDA, b"\x01\x01\x00\x00\x3F\x00") + bytes(b if b != 0xFF else 0xFE for b in os.urandom(60000)) + b"\xFF\xD9"
open(sys.argv[2], "wb").write(jpeg)
# A real 2000×1500 RGB PNG (a gradient), for the profile photo whose thumbnail is made at upload.
def chunk(kind, data): return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
rows = b"".join(b"\0" + bytes((x * 255 // 2000, y * 255 // 1500, 128)[c] for x in range(2000) for c in range(3)) for y in range(1500))
png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 2000, 1500, 8, 2, 0, 0, 0)) + chunk(b"IDAT", zlib.compress(rows, 6)) + chunk(b"IEND", b"")
open(sys.argv[3], "wb").write(png)
PY
for kind in video thumbnail; do
  file="$work/video.mp4"; type=video/mp4
  [ "$kind" = thumbnail ] && { file="$work/thumbnail.jpg"; type=image/jpeg; }
  curl -fsS -X PUT -H "Authorization: Bearer $token" -H "Content-Type: $type" --data-binary "@$file" \
    "$url/v1/admin/workouts/$workout/media/$kind" >/dev/null
done
link() { curl -fsS -H "Authorization: Bearer $token" "$url/v1/workouts/$workout/media/$1" \
  | python3 -c 'import json,sys; u=json.load(sys.stdin)["url"]; print(u[u.index("/v1/media/"):])'; }
video_path=$(link video)
thumbnail_path=$(link thumbnail)

# The profile photo: uploads (each checked, cleaned, and its 256-pixel thumbnail made and stored), then its thumbnail
# link served like the others.
uploads=10
started=$(date +%s.%N)
for _ in $(seq 1 "$uploads"); do
  curl -fsS -X PUT -H "Authorization: Bearer $token" -H "Content-Type: image/png" --data-binary "@$work/photo.png" "$url/v1/me/photo" >/dev/null
done
upload_seconds=$(python3 -c "import sys,time; print(f'{(time.time() - float(sys.argv[1])) / int(sys.argv[2]):.3f}')" "$started" "$uploads")
photo_link=$(curl -fsS -H "Authorization: Bearer $token" "$url/v1/users/$user/photo?size=thumbnail")
photo_thumbnail_path=$(python3 -c 'import json,sys; a=json.load(sys.stdin); assert a["size"] == "thumbnail", a; u=a["url"]; print(u[u.index("/v1/media/"):])' <<<"$photo_link")
stored_video=$(find "$work/data/media" -name 'video-*' | head -n 1)
stored_thumbnail=$(find "$work/data/media" -name 'thumbnail-*' | head -n 1)

# nginx as Debian configures it (sendfile on), serving the same two files from the same disk.
nginx_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
mkdir -p "$work/nginx/root"
ln "$stored_video" "$work/nginx/root/video.mp4"
ln "$stored_thumbnail" "$work/nginx/root/thumbnail.jpg"
# The stored files are the server's own (mode 0600 in 0700 directories): nginx's workers read them as that user.
cat >"$work/nginx/nginx.conf" <<CONF
user $(id -un) $(id -gn);
worker_processes auto;
daemon off;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log;
events { worker_connections 1024; }
http {
  sendfile on; tcp_nopush on; keepalive_requests 100000;
  access_log off;
  types { video/mp4 mp4; image/jpeg jpg; }
  client_body_temp_path $work/nginx; proxy_temp_path $work/nginx; fastcgi_temp_path $work/nginx;
  uwsgi_temp_path $work/nginx; scgi_temp_path $work/nginx;
  server { listen 127.0.0.1:$nginx_port; root $work/nginx/root; }
}
CONF
nginx -c "$work/nginx/nginx.conf" &
nginx_pid=$!
for _ in $(seq 1 50); do curl -fsS -o /dev/null "http://127.0.0.1:$nginx_port/thumbnail.jpg" 2>/dev/null && break; sleep 0.1; done

# Each request asks for a random 1 MiB range of the 50 MB file, as a seeking player does.
cat >"$work/range.lua" <<'LUA'
math.randomseed(os.time())
request = function()
  local first = math.random(0, 50 * 1000 * 1000 - 1048576)
  return wrk.format("GET", nil, { ["Range"] = "bytes=" .. first .. "-" .. (first + 1048575) })
end
LUA

run() { # name url [script]
  local out
  if [ -n "${3:-}" ]; then out=$(wrk -t2 -c"$connections" -d"${duration}s" -s "$3" "$2"); else out=$(wrk -t2 -c"$connections" -d"${duration}s" "$2"); fi
  local rps mbs
  rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
  mbs=$(awk '/Transfer\/sec/ {v=$2; if (v ~ /GB/) {sub("GB","",v); v*=1024} else if (v ~ /MB/) {sub("MB","",v)} else if (v ~ /KB/) {sub("KB","",v); v/=1024}; print v}' <<<"$out")
  grep -q "Non-2xx" <<<"$out" && { { echo "$1: some answers were not 2xx:"; echo "$out"; } >&2; exit 1; }
  printf '%-28s %10s req/s %10s MB/s\n' "$1" "$rps" "$mbs" >&2
  echo "$rps $mbs"
}
echo "== ${duration}s each, ${connections} connections, wrk -t2, video in ${rounds} rounds"
# FITBASE_BENCH_PERF=FILE: the server's CPU profile during its first video run (perf record -e cpu-clock -g).
nginx_workers=$(pgrep -P "$nginx_pid" | tr '\n' ' ')
# One round: FitBase's video run and nginx's, one after the other, in turns (FitBase first in odd rounds, nginx first in
# even ones), so a load that comes and goes on the machine falls on both; each round gives a ratio.
video_fitbase() {
  [ -n "${FITBASE_BENCH_PERF:-}" ] && [ "$round" = 1 ] && { perf record -e cpu-clock -g -p "$pid" -o "$FITBASE_BENCH_PERF" -- sleep "$duration" >/dev/null 2>&1 & }
  local ticks; ticks=$(cpu_ticks "$pid")
  read -r fb_video_rps fb_video_mbs < <(run "fitbase video 1 MiB ranges" "$url$video_path" "$work/range.lua")
  fb_ticks=$(( $(cpu_ticks "$pid") - ticks ))
}
video_nginx() {
  local ticks
  # shellcheck disable=SC2086
  ticks=$(cpu_ticks $nginx_workers)
  read -r ng_video_rps ng_video_mbs < <(run "nginx video 1 MiB ranges" "http://127.0.0.1:$nginx_port/video.mp4" "$work/range.lua")
  # shellcheck disable=SC2086
  ng_ticks=$(( $(cpu_ticks $nginx_workers) - ticks ))
}
video_rounds=""
for round in $(seq 1 "$rounds"); do
  if [ $((round % 2)) = 1 ]; then video_fitbase; video_nginx; else video_nginx; video_fitbase; fi
  [ -n "${fb_video_mbs:-}" ] && [ -n "${ng_video_mbs:-}" ] || exit 1
  video_rounds+="$fb_video_mbs $ng_video_mbs $fb_video_rps $ng_video_rps $fb_ticks $ng_ticks;"
done
read -r fb_thumb_rps _ < <(run "fitbase thumbnail (60 KB)" "$url$thumbnail_path")
read -r ng_thumb_rps _ < <(run "nginx thumbnail (60 KB)" "http://127.0.0.1:$nginx_port/thumbnail.jpg")
read -r fb_photo_rps _ < <(run "fitbase photo thumbnail" "$url$photo_thumbnail_path")
echo "photo upload with its thumbnail (2000×1500 PNG, 1 at a time): ${upload_seconds} s each"
echo "photo thumbnail (256 px) served: ${fb_photo_rps} req/s"
[ -n "${fb_thumb_rps:-}" ] && [ -n "${ng_thumb_rps:-}" ] || exit 1
python3 - "$video_rounds" "$fb_thumb_rps" "$ng_thumb_rps" "$duration" "$(getconf CLK_TCK)" <<'PY'
import statistics, sys
rounds = [list(map(float, r.split())) for r in sys.argv[1].split(";") if r.strip()]
ft, nt, seconds, hz = map(float, sys.argv[2:])
ratios = []
for i, (fv, nv, fr, nr, fticks, nticks) in enumerate(rounds, 1):
    ratios.append(fv / nv)
    print(f"video ranges, round {i}: FitBase {fv:.0f} MB/s = {100 * fv / nv:.0f} % of nginx ({nv:.0f} MB/s); "
          f"CPU per range: FitBase {1e6 * fticks / hz / (fr * seconds):.0f} µs, nginx {1e6 * nticks / hz / (nr * seconds):.0f} µs")
print(f"video ranges: FitBase at {100 * statistics.median(ratios):.0f} % of nginx (median of {len(ratios)} rounds; "
      f"lowest {100 * min(ratios):.0f} %, highest {100 * max(ratios):.0f} %)")
print(f"thumbnails:   FitBase {ft:.0f} req/s = {100 * ft / nt:.0f} % of nginx ({nt:.0f} req/s)")
PY
