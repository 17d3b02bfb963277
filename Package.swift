// swift-tools-version: 6.1
// FitBase: a self-hostable backend and Swift SDK for fitness and health apps.
// Read this file as a map of the system; ARCHITECTURE.md explains each part.
import PackageDescription

/// Compiler discipline shared by every target.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "FitBase",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .executable(name: "fitbase", targets: ["fitbase"]),
        .library(name: "FitBaseCore", targets: ["FitBaseCore"]),
        .library(name: "FitBaseClient", targets: ["FitBaseClient"]),
        .library(name: "FitBaseKit", targets: ["FitBaseKit"]),
        .library(name: "FitBaseServer", targets: ["FitBaseServer"]),
    ],
    dependencies: [
        // HTTP server and the generated OpenAPI handlers.
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-openapi-generator.git", from: "1.14.3"),
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.13.4"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        // HTTP client: the SDK's transport on Linux.
        .package(url: "https://github.com/swift-server/swift-openapi-async-http-client.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-openapi-urlsession.git", from: "1.4.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        // NIOHTTPTypes: the HTTP parts a channel handler sees under Hummingbird (media links answered on the event loop).
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        // Push: the fake APNs gateway speaks HTTP/2 (the provider's HTTP/2 comes through AsyncHTTPClient).
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        // E-mail: the SMTP client's TLS (implicit and STARTTLS) and the message templates.
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.1.1"),
        // Storage: one SQLKit layer over SQLite (embedded default) and PostgreSQL (scale-out).
        .package(url: "https://github.com/vapor/sql-kit.git", from: "3.36.0"),
        .package(url: "https://github.com/vapor/sqlite-kit.git", from: "4.5.2"),
        .package(url: "https://github.com/vapor/postgres-kit.git", from: "2.17.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/vapor/sqlite-nio.git", from: "1.13.2"),
        .package(url: "https://github.com/vapor/async-kit.git", from: "1.22.0"),
        // Identity and cryptography: JWTs, bcrypt, hashes.
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.8.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth.git", from: "2.5.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", "4.5.2"..<"5.0.0"),
        // Billing: the App Store's x5c certificate chains.
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        // Process plumbing: CLI, logging, lifecycle.
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        // Operations: metrics through swift-metrics' API, exposed in Prometheus' text format (a registry per application).
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        // OpenTelemetry traces over OTLP/HTTP when an exporter endpoint is set (the gRPC exporter is left out).
        .package(url: "https://github.com/swift-otel/swift-otel.git", from: "1.6.0", traits: ["OTLPHTTP"]),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
        // The SDK's local store (SQLite on the device).
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        // Tests only: reading openapi.yaml for the access matrix.
        .package(url: "https://github.com/jpsim/Yams.git", "5.0.1"..<"7.0.0"),
        // FitBaseKit's fakes: a call a test did not set up reports an issue (in a test run; nothing in an app).
        .package(url: "https://github.com/pointfreeco/xctest-dynamic-overlay.git", exact: "1.13.1"),
    ],
    targets: [
        // MARK: Shared by server and client

        /// Pure domain: models, rules, calculations. Foundation only, no I/O.
        .target(
            name: "FitBaseCore",
            swiftSettings: swiftSettings
        ),
        /// The wire contract: openapi.yaml and the code generated from it (types, server protocol, client).
        .target(
            name: "FitBaseAPI",
            dependencies: [
                "FitBaseCore",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
            ],
            resources: [.copy("openapi.yaml")],
            swiftSettings: swiftSettings,
            plugins: ["FitBaseAPIGenerator"]
        ),
        /// swift-openapi-generator's build plugin for FitBaseAPI, its files written with plain imports instead of
        /// `public import`s most files do not use (a warning each before Swift 6.4; `fitbase-api-generator` says why).
        .plugin(
            name: "FitBaseAPIGenerator",
            capability: .buildTool(),
            dependencies: [
                "fitbase-api-generator",
                .product(name: "swift-openapi-generator", package: "swift-openapi-generator"),
            ]
        ),
        .executableTarget(name: "fitbase-api-generator", swiftSettings: swiftSettings),

        // MARK: Server

        /// AWS Signature Version 4 (headers and presigned URLs), for the S3-compatible media store. Its own small
        /// module: swift-crypto and Foundation only, tested against AWS's published test suite and botocore.
        .target(
            name: "FitBaseSigV4",
            dependencies: [.product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: swiftSettings
        ),
        // `struct heif_error` declared in C, for the libheif functions loaded at run time (HEIC photo thumbnails).
        .target(name: "CLibHEIFABI"),
        /// The server as a library: `buildApplication(configuration:)`, features, stores, integrations.
        .target(
            name: "FitBaseServer",
            dependencies: [
                "CLibHEIFABI",
                "FitBaseCore",
                "FitBaseAPI",
                "FitBaseSigV4",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "SQLiteKit", package: "sqlite-kit"),
                .product(name: "PostgresKit", package: "postgres-kit"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "SQLiteNIO", package: "sqlite-nio"),
                .product(name: "AsyncKit", package: "async-kit"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                // Media in the data directory: streamed reads and writes.
                .product(name: "_NIOFileSystem", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "OTel", package: "swift-otel"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            resources: [
                .copy("Catalog/Resources/demo-catalog.json"),
                .copy("Billing/Resources/default-products.json"),
                .copy("Billing/Resources/AppleRootCA-G3.cer"),
                .copy("Templates"),
            ],
            swiftSettings: swiftSettings
        ),
        /// The command-line entry point: serve, migrate.
        .executableTarget(
            name: "fitbase",
            dependencies: [
                "FitBaseServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),

        // MARK: Client SDK

        /// The SDK app developers import: session, generated API client, local store, repositories and sync.
        .target(
            name: "FitBaseClient",
            dependencies: [
                "FitBaseCore",
                "FitBaseAPI",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                // URLSession on Apple platforms, AsyncHTTPClient elsewhere.
                .product(
                    name: "OpenAPIURLSession", package: "swift-openapi-urlsession",
                    condition: .when(platforms: [.macOS, .iOS, .tvOS, .watchOS, .visionOS])
                ),
                .product(
                    name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client",
                    condition: .when(platforms: [.linux])
                ),
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(platforms: [.linux])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(platforms: [.linux])),
                .product(name: "GRDB", package: "GRDB.swift"),
                // The local store's sealed collections (AES-GCM; CryptoKit on Apple platforms).
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        /// The app layer over the SDK: a service per feature behind a protocol (live, and in-memory fakes for previews
        /// and tests), the dependency container, cache-first loading, analytics and deep links. No SwiftUI, StoreKit,
        /// HealthKit, Keychain or Network: it builds and is tested on Linux; Apple-only adapters sit in
        /// `#if canImport(...)` files.
        .target(
            name: "FitBaseKit",
            dependencies: [
                "FitBaseClient",
                "FitBaseCore",
                "FitBaseAPI",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "IssueReporting", package: "xctest-dynamic-overlay"),
            ],
            swiftSettings: swiftSettings
        ),

        /// A whole user story through FitBaseKit's view models against a running server (`.ci/run` runs it against
        /// the smoke-test server).
        .executableTarget(
            name: "fitbase-journey",
            dependencies: [
                "FitBaseKit",
                "FitBaseClient",
                "FitBaseCore",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: swiftSettings
        ),
        /// The README's app: its `FitBaseDependencies.live` snippet word for word (without SwiftUI), driven against a
        /// running server by `scripts/ci/readme-app.sh`, which also checks the snippet and the program do not drift.
        .executableTarget(
            name: "fitbase-readme-app",
            dependencies: ["FitBaseKit", "FitBaseCore"],
            path: "Examples/ReadmeApp",
            swiftSettings: swiftSettings
        ),

        // MARK: Benchmarks

        /// The storage layer alone: primary-key reads and insert transactions through `Database`
        /// (`scripts/bench/bench-storage.sh`).
        .executableTarget(
            name: "fitbase-storage-bench",
            dependencies: [
                "FitBaseServer",
                .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Benchmarks/StorageBench",
            swiftSettings: swiftSettings
        ),
        /// Sync through the SDK against a running server (`scripts/bench/bench-sync.sh`).
        .executableTarget(
            name: "fitbase-sync-bench",
            dependencies: ["FitBaseClient", "FitBaseCore", "FitBaseAPI"],
            path: "Benchmarks/SyncBench",
            swiftSettings: swiftSettings
        ),
        /// The bare Hummingbird route FitBase's /healthz is compared with (`scripts/bench/bench-vs-pocketbase.sh`).
        .executableTarget(
            name: "bench-bare-hello",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            path: "Benchmarks/BareHello",
            swiftSettings: swiftSettings
        ),
        /// Push throughput: `APNsProvider` against `fitbase-fake-apns` in another process
        /// (`scripts/bench/bench-apns.sh`).
        .executableTarget(
            name: "fitbase-apns-bench",
            dependencies: [
                "FitBaseServer",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Benchmarks/APNsBench",
            swiftSettings: swiftSettings
        ),
        /// A `week_ended` fanned out to many devices through the outbox, `PushWorker` and `APNsProvider` against
        /// `fitbase-fake-apns` (`scripts/bench/bench-push.sh`).
        .executableTarget(
            name: "fitbase-push-bench",
            dependencies: [
                "FitBaseServer",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Benchmarks/PushBench",
            swiftSettings: swiftSettings
        ),
        /// The fake gateway in its own process: prints its port, writes its CA (and a key) for the provider.
        .executableTarget(
            name: "fitbase-fake-apns",
            dependencies: [
                "FitBaseFakeAPNs",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Benchmarks/FakeAPNsServer",
            swiftSettings: swiftSettings
        ),

        // MARK: Tests

        /// Shared by the test targets: throw-away databases on every engine, test configurations, live servers, problem
        /// checks, waiting for a condition.
        .target(
            name: "FitBaseTestSupport",
            dependencies: [
                "FitBaseAPI",
                "FitBaseCore",
                "FitBaseServer",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/FitBaseTestSupport",
            swiftSettings: swiftSettings
        ),
        /// A fake Apple push gateway (HTTP/2 over TLS, Apple's checks and error answers), for the tests and benchmarks.
        .target(
            name: "FitBaseFakeAPNs",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            path: "Tests/FakeAPNs",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FitBaseCoreTests",
            dependencies: ["FitBaseCore"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FitBaseSigV4Tests",
            dependencies: ["FitBaseSigV4"],
            exclude: ["aws-sig-v4-test-suite"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FitBaseServerTests",
            dependencies: [
                "FitBaseServer",
                "FitBaseAPI",
                "FitBaseTestSupport",
                "FitBaseFakeAPNs",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "SQLKit", package: "sql-kit"),
                // The SQLite driver's tests compare it with SQLiteKit over SQLiteNIO.
                .product(name: "SQLiteKit", package: "sqlite-kit"),
                .product(name: "SQLiteNIO", package: "sqlite-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Yams", package: "Yams"),
            ],
            // Read from the source tree by the tests that use them (`#filePath`), not bundled.
            exclude: ["Fixtures"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FitBaseClientTests",
            dependencies: [
                "FitBaseClient",
                "FitBaseServer",
                "FitBaseTestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                // The sealing tests write a store as an SDK before sealing did.
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FitBaseKitTests",
            dependencies: [
                "FitBaseKit",
                "FitBaseClient",
                "FitBaseServer",
                "FitBaseTestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                // Hears the issues the fakes report (IssueReporting finds Swift Testing through it off Apple platforms).
                .product(name: "IssueReportingTestSupport", package: "xctest-dynamic-overlay"),
                // Apple's and Google's ID tokens, minted with real RSA keys for the sign-in glue's tests.
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)

// MARK: Apple adapters against shims of Apple's API (CI only)

/// `scripts/ci/apple-adapters.sh` sets `FITBASE_APPLE_SHIMS` to a directory of modules named like Apple's frameworks
/// (StoreKit, HealthKit, Security, Network …), compiled from `AppleShims/`: the SDK's and the Kit's `#if canImport`
/// adapters then compile against them, and `AppleAdapterTests` runs their logic. The shims are never targets of this
/// graph (dependencies test `canImport(Network)` too): only our own targets see them, and only those the test needs.
if let shims = Context.environment["FITBASE_APPLE_SHIMS"] {
    let kept: Set<String> = [
        "FitBaseCore", "FitBaseAPI", "FitBaseClient", "FitBaseKit", "FitBaseAPIGenerator", "fitbase-api-generator",
    ]
    package.targets.removeAll { !kept.contains($0.name) }
    package.products = [.library(name: "FitBaseKit", targets: ["FitBaseKit"])]
    package.targets.append(.testTarget(
        name: "AppleAdapterTests",
        dependencies: [
            "FitBaseClient", "FitBaseKit", "FitBaseCore",
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "HTTPTypes", package: "swift-http-types"),
            .product(name: "IssueReportingTestSupport", package: "xctest-dynamic-overlay"),
            .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
        ],
        // Swift Testing's cross-import overlay for UIKit (`_Testing_UIKit`) exists only in Apple's SDK.
        swiftSettings: swiftSettings + [.unsafeFlags(["-Xfrontend", "-disable-cross-import-overlays"])]
    ))
    let unshimmed: Set<String> = ["FitBaseCore", "FitBaseAPI", "FitBaseAPIGenerator", "fitbase-api-generator"]
    for target in package.targets where !unshimmed.contains(target.name) {
        // Each shim autolinks its static library (`-module-link-name AppleShim<Module>`) from this directory.
        target.swiftSettings = (target.swiftSettings ?? []) + [.unsafeFlags(["-I", shims])]
        target.linkerSettings = (target.linkerSettings ?? []) + [.unsafeFlags(["-L", shims])]
    }
}
