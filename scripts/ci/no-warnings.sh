#!/usr/bin/env bash
# No warning in FitBase's own code: its sources, tests, benchmarks and examples, the code generated from openapi.yaml,
# and its package manifest (a file left neither a resource nor excluded). Fails naming each one. Warnings in the
# dependencies' code (.build/checkouts) and SwiftPM's about another package are theirs, and left out; any other (the
# linker's, the driver's) counts.
#
#   scripts/ci/no-warnings.sh BUILD_LOG   reads the output of a `swift build` (`.ci/run` tees its first build into one)
#   scripts/ci/no-warnings.sh             runs `swift build --build-tests` and reads its output
#
# Only what the build compiled is seen: on a fresh clone, everything; on a warm `.build`, only the files it rebuilt.
set -euo pipefail
cd "$(dirname "$0")/../.."

if [[ $# -gt 0 ]]; then
  log=$1
else
  log=$(mktemp /tmp/fitbase-build.XXXXXX)
  trap 'rm -f "$log"' EXIT
  swift build --build-tests 2>&1 | tee "$log"
fi
[[ -s "$log" ]] || { echo "no-warnings: $log is empty or missing" >&2; exit 2; }

# SwiftPM names the root package after its directory.
root=$(basename "$PWD" | tr '[:upper:]' '[:lower:]')
# A diagnostic's first line starts the line (the compiler's excerpt of the source under it is indented); SwiftPM lists
# the files a warning is about on the indented lines after it.
ours=$(awk -v root="$root" '
  pending != "" && /^[[:space:]]+\// { sub(/^[[:space:]]+/, ""); pending = pending " " $0; next }
  pending != "" { print pending; pending = "" }
  /^\/[^:]+:[0-9]+:[0-9]+: warning: / { if (index($0, "/.build/checkouts/") == 0) print; next }
  /^warning: '\''[^'\'']+'\'': / {
    split($0, quoted, "'\''")
    if (tolower(quoted[2]) == root) pending = $0
    next
  }
  /^[^[:space:]|].*warning: / { print }
  END { if (pending != "") print pending }
' "$log" | sort -u)
if [[ -n "$ours" ]]; then
  echo "no-warnings: $(wc -l <<<"$ours") warning(s) in FitBase's code (fix each cause; do not silence the compiler):"
  echo "$ours"
  exit 1
fi
echo "no-warnings: none in FitBase's sources, tests, benchmarks, generated code or manifest"
