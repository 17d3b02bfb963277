#!/usr/bin/env bash
# Builds the release `fitbase` with the Swift standard library and Foundation linked in statically, and stages what it
# runs from in one folder: the binary and the two resource bundles SwiftPM puts beside it (the contract, the demo
# catalog, the default products, Apple's root certificate, the e-mail templates). The Dockerfile's build stage runs
# this very script, so the image and a CI machine (or this one: Docker does not run here) build the same thing.
#
#   scripts/build-release.sh [STAGING_DIR]     (default: dist/fitbase)
#
# Checks that the binary links no Swift runtime library dynamically and that it serves (`/readyz` on a throw-away data
# directory), then prints its size.
set -euo pipefail
cd "$(dirname "$0")/.."
staging="${1:-dist/fitbase}"

swift build -c release --static-swift-stdlib --product fitbase
bin="$(swift build -c release --static-swift-stdlib --product fitbase --show-bin-path)"

rm -rf "$staging"
mkdir -p "$staging"
cp "$bin/fitbase" "$staging/"
for bundle in "$bin"/*.resources; do
  case "$(basename "$bundle")" in
    FitBase_FitBaseAPI.resources | FitBase_FitBaseServer.resources) cp -R "$bundle" "$staging/" ;;
  esac
done
[ -d "$staging/FitBase_FitBaseAPI.resources" ] && [ -d "$staging/FitBase_FitBaseServer.resources" ] || {
  echo "build-release: the resource bundles are missing from $bin" >&2
  exit 1
}

echo "== dynamic libraries of $staging/fitbase"
ldd "$staging/fitbase" || true
if ldd "$staging/fitbase" | grep -q 'libswift\|libFoundation\|lib_Foundation\|libdispatch\|libBlocksRuntime'; then
  echo "build-release: the binary links the Swift runtime dynamically" >&2
  exit 1
fi

echo "== smoke test"
data="$(mktemp -d)"
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')"
FITBASE_DEMO_CATALOG=false FITBASE_BCRYPT_COST=4 "$staging/fitbase" serve --port "$port" --data-dir "$data" >"$data/serve.log" 2>&1 &
pid=$!
ready=""
for _ in $(seq 1 100); do
  if curl -fsS "http://127.0.0.1:$port/readyz" 2>/dev/null; then ready=yes; break; fi
  sleep 0.2
done
kill -TERM "$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true
if [ -z "$ready" ]; then
  echo "build-release: the binary did not become ready" >&2
  cat "$data/serve.log" >&2
  rm -rf "$data"
  exit 1
fi
echo
rm -rf "$data"

echo "== size"
du -sh "$staging/fitbase" "$staging"
