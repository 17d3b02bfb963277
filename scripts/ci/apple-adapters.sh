#!/usr/bin/env bash
# Type-checks every Apple adapter of FitBaseClient and FitBaseKit (the `#if canImport(StoreKit)`, `HealthKit`,
# `Security`, `Network`, `MetricKit`, `AuthenticationServices`, `UserNotifications`, `UIKit` files) on Linux, against
# shims of Apple's documented API (AppleShims/<Module>), and runs their logic tests (Tests/AppleAdapterTests) on the
# shims' scripted behaviour.
#
#   scripts/ci/apple-adapters.sh [--scratch-path DIR] [--enable-code-coverage]
#
# The shims are compiled here with swiftc, one static library and module per framework, into DIR/apple-shims, and
# handed to the package through FITBASE_APPLE_SHIMS (Package.swift then keeps only the SDK's and the Kit's targets and
# adds AppleAdapterTests). They are never SwiftPM targets: async-http-client, swift-nio-transport-services and others
# test `canImport(Network)` / `canImport(Security)` and must keep compiling their Linux branches.
#
# DIR defaults to .build-apple (gitignored), so the shim build never disturbs .build. CI runs this as its last step
# with `--scratch-path .build --enable-code-coverage`: the dependencies compiled for the test run are reused and only
# FitBaseClient, FitBaseKit and the tests are compiled again.
set -euo pipefail
cd "$(dirname "$0")/../.."

scratch=.build-apple
coverage=()
while [ $# -gt 0 ]; do
  case "$1" in
    --scratch-path) scratch="$2"; shift 2 ;;
    --enable-code-coverage) coverage=(--enable-code-coverage); shift ;;
    *) echo "usage: $0 [--scratch-path DIR] [--enable-code-coverage]" >&2; exit 2 ;;
  esac
done

# Adapters call Apple's API only: the shims' test controls (`_SecurityShim`, `_StoreKitShim` …) are for the tests.
if grep -rnE '\b_[A-Za-z]+Shim\b' Sources/; then
  echo "an adapter uses a shim's test control (above): adapters may call only Apple's API" >&2
  exit 1
fi

# Every module the SDK and the Kit test with canImport has a shim, or a reason here to need none: CryptoKit's API is
# swift-crypto's (its Linux branch is compiled in every build), OpenAPIURLSession is a package product for Apple
# platforms, and AppKit's one call (macOS push registration) is the unchecked `#elseif` of a UIKit call.
for module in $(grep -rhoE 'canImport\([A-Za-z_]+\)' Sources/FitBaseClient Sources/FitBaseKit | sed -E 's/canImport\((.*)\)/\1/' | sort -u); do
  case "$module" in
    CryptoKit | OpenAPIURLSession | AppKit) ;;
    *) [ -d "AppleShims/$module" ] || { echo "no shim for canImport($module): add AppleShims/$module" >&2; exit 1; } ;;
  esac
done

# A fresh scratch directory gets the dependencies' checkouts of .build instead of fetching them again.
if [ "$scratch" != .build ] && [ ! -d "$scratch/checkouts" ] && [ -d .build/checkouts ]; then
  mkdir -p "$scratch"
  cp -a .build/repositories .build/checkouts .build/workspace-state.json "$scratch/"
fi

shims="$(cd "$(dirname "$scratch")" && pwd)/$(basename "$scratch")/apple-shims"
rm -rf "$shims"
mkdir -p "$shims"
# In dependency order: a shim may import the ones before it.
for module in Security Network HealthKit StoreKit MetricKit UIKit UserNotifications AuthenticationServices; do
  swiftc -parse-as-library -swift-version 6 -diagnostic-style llvm -module-name "$module" \
    -module-link-name "AppleShim$module" -I "$shims" \
    -emit-module -emit-module-path "$shims/$module.swiftmodule" \
    -emit-library -static -o "$shims/libAppleShim$module.a" \
    AppleShims/"$module"/*.swift
done

export FITBASE_APPLE_SHIMS="$shims"
swift build --scratch-path "$scratch" --build-tests "${coverage[@]}"
swift test --scratch-path "$scratch" --skip-build "${coverage[@]}" --filter AppleAdapterTests
