#!/usr/bin/env bash
# Line coverage of FitBaseKit's services and view models against the floors of seed 002 (services 90 %, view models
# 85 %). Run after `swift test --enable-code-coverage` (add `--filter 'Kit|Client'` to run only the SDK's suites):
#
#   swift test --enable-code-coverage --filter 'Kit|Client' && scripts/ci/coverage-floors.sh
#
# Prints each folder's line coverage and every file under it; exits 1 when a folder is below its floor, 2 when the
# coverage data is missing. A folder that does not exist yet (ViewModels before its first screen) is skipped.
set -euo pipefail
cd "$(dirname "$0")/../.."

build_dir=${BUILD_DIR:-.build/debug}
profdata=$(ls -t "$build_dir"/codecov/*.profdata 2>/dev/null | head -1 || true)
if [[ -z "$profdata" ]]; then
    echo "no coverage data under $build_dir/codecov: run swift test --enable-code-coverage first" >&2
    exit 2
fi
binary=$(ls -d "$build_dir"/*.xctest 2>/dev/null | head -1 || true)
if [[ -d "$binary" ]]; then binary="$binary/Contents/MacOS/$(basename "$binary" .xctest)"; fi
if [[ -z "$binary" || ! -f "$binary" ]]; then
    echo "no test binary under $build_dir" >&2
    exit 2
fi
# The toolchain's own llvm-cov: a system one (Debian's /usr/bin/llvm-cov) cannot read this compiler's profile format.
swift_bin=$(dirname "$(readlink -f "$(command -v swift)")")
llvm_cov="$swift_bin/llvm-cov"
if [[ ! -x "$llvm_cov" ]]; then llvm_cov=$(command -v llvm-cov || echo "xcrun llvm-cov"); fi

status=0
check() {
    local folder=$1 floor=$2
    if [[ ! -d "$folder" ]]; then
        echo "$folder: absent, skipped"
        return
    fi
    local files
    files=$(find "$folder" -name '*.swift' | sort)
    # llvm-cov's TOTAL line: ... Lines Missed Cover ...; the line cover is the 10th column of `report`.
    local report
    report=$($llvm_cov report "$binary" -instr-profile="$profdata" $files)
    echo "$report" | awk -v folder="$folder" 'NR > 2 && $1 != "TOTAL" && NF >= 10 && $1 !~ /^-+$/ { sub(".*/" folder "/", "", $1); printf "  %-60s %s\n", $1, $10 }'
    local total
    total=$(echo "$report" | awk '$1 == "TOTAL" { sub("%", "", $10); print $10 }')
    if [[ -z "$total" ]]; then
        echo "$folder: no coverage recorded" >&2
        status=1
        return
    fi
    if awk -v total="$total" -v floor="$floor" 'BEGIN { exit !(total + 0 < floor + 0) }'; then
        echo "$folder: lines ${total} % — below the floor of ${floor} %"
        status=1
    else
        echo "$folder: lines ${total} % (floor ${floor} %)"
    fi
}

check Sources/FitBaseKit/Services 90
check Sources/FitBaseKit/ViewModels 85
exit $status
