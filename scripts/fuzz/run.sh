#!/usr/bin/env bash
# Fuzz FitBase's parsers of untrusted bytes with libFuzzer.
#
#   scripts/fuzz/run.sh [-t SECONDS] [TARGET ...]
#
# Each target is a folder under Fuzz/: `Target.swift` (defines `LLVMFuzzerTestOneInput`), `sources` (the repository's
# Swift files it compiles with, one path a line; they must need nothing but the standard library and Foundation) and
# `corpus/` (seed files, real examples of the format). Every target, or those named, is built with
# `swiftc -sanitize=fuzzer,address` into .build/fuzz/ and run for SECONDS (default 10) on a copy of its corpus,
# whatever it found kept under .build/fuzz/<target>/. A crash stops that target: its input is copied to
# Fuzz/<target>/crashes/ and the script exits 1 after running the rest. Turn each crash into a regression test
# (Tests/FitBaseServerTests/FuzzRegressionTests.swift replays every file under Fuzz/*/regressions/) before fixing it.
#
# A longer campaign: scripts/fuzz/run.sh -t 3600 HEIC   (or every target for an hour each: -t 3600).
# The summary line per target gives the executions run, the coverage reached and the crashes found.
set -uo pipefail
cd "$(dirname "$0")/../.."

seconds=10
if [ "${1:-}" = "-t" ]; then seconds=$2; shift 2; fi
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for dir in Fuzz/*/; do [ -f "$dir/Target.swift" ] && targets+=("$(basename "$dir")"); done
fi

out=.build/fuzz
mkdir -p "$out"
failed=()
printf '%-22s %12s %10s %8s\n' target executions coverage crashes
for target in "${targets[@]}"; do
  dir=Fuzz/$target
  [ -f "$dir/Target.swift" ] || { echo "no fuzz target $target (Fuzz/$target/Target.swift)"; exit 2; }
  mapfile -t sources < <(grep -v '^\s*\(#\|$\)' "$dir/sources")
  binary=$out/$target/fuzz
  mkdir -p "$out/$target/corpus" "$out/$target/artifacts"
  if ! swiftc -sanitize=fuzzer,address -parse-as-library -O -module-name "Fuzz$target" \
      "$dir/Target.swift" "${sources[@]}" -o "$binary" >"$out/$target/build.log" 2>&1; then
    echo "$target: does not build:"; grep -v 'ld.gold: warning' "$out/$target/build.log" | head -40
    failed+=("$target"); continue
  fi
  [ -d "$dir/corpus" ] && cp -n "$dir"/corpus/* "$out/$target/corpus/" 2>/dev/null
  log=$out/$target/run.log
  "$binary" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
    -artifact_prefix="$out/$target/artifacts/" "$out/$target/corpus" >"$log" 2>&1
  rc=$?
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  coverage=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*')
  crashes=0
  if [ "$rc" != 0 ]; then
    mkdir -p "$dir/crashes"
    for artifact in "$out/$target"/artifacts/*; do
      [ -f "$artifact" ] || continue
      cp "$artifact" "$dir/crashes/" && crashes=$((crashes + 1))
    done
    failed+=("$target")
  fi
  printf '%-22s %12s %10s %8s\n' "$target" "${runs:-?}" "${coverage:-?}" "$crashes"
  [ "$rc" != 0 ] && { echo "  $target stopped (rc $rc); the end of its log:"; tail -30 "$log" | sed 's/^/  /'; }
done
if [ ${#failed[@]} -gt 0 ]; then echo "fuzzing found problems in: ${failed[*]}"; exit 1; fi
