#!/bin/sh
# Evaluates CyclePredictor on a generated population: MAE, share within ±2 days, 80 % range coverage and width,
# before and after ovulation is detected. Compiles FitBaseCore with the test target's generator into one binary.
#   scripts/cycle-eval.sh [women] [seed]
set -eu
cd "$(dirname "$0")/.."
out="${TMPDIR:-/tmp}/fitbase-cycle-eval"
mkdir -p "$out"
swiftc -O -swift-version 6 -package-name FitBase -module-name FitBaseCore -parse-as-library -emit-module -emit-module-path "$out/FitBaseCore.swiftmodule" \
    -emit-library -static -o "$out/libFitBaseCore.a" $(find Sources/FitBaseCore -name '*.swift')
swiftc -O -swift-version 6 -package-name FitBase -I "$out" -o "$out/cycle-eval" -L "$out" -lFitBaseCore \
    Tests/FitBaseCoreTests/SyntheticCycles.swift Tests/FitBaseCoreTests/CyclePredictionEvaluation.swift scripts/cycle-eval/main.swift
"$out/cycle-eval" "$@"
