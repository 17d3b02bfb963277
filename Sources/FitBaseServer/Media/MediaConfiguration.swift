import FitBaseSigV4
import Foundation

/// Where media is stored and how long its links live (environment only).
///
/// | setting | environment | default |
/// |---|---|---|
/// | store | `FITBASE_STORAGE_URL` | the data directory (`<data dir>/media`); `s3://bucket?region=…&endpoint=…[&path-style=…]` for an S3-compatible store |
/// | S3 credentials | `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN` | required with an `s3://` store |
/// | lifetime of a media link | `FITBASE_MEDIA_LINK_SECONDS` | `3600` (1 hour; 60 to 604800) |
/// | largest profile photo | `FITBASE_PHOTO_MAX_BYTES` | `10485760` (10 MiB) |
/// | largest photo side, in pixels | `FITBASE_PHOTO_MAX_PIXELS` | `8192` |
/// | most pixels a photo's decoder may build | `FITBASE_PHOTO_MAX_DECODED_PIXELS` | `50000000` (a 48 MP photo) |
/// | the image worker (a `fitbase` binary) | `FITBASE_IMAGE_WORKER` | the `fitbase` beside the running executable |
/// | an image worker's address space | `FITBASE_IMAGE_WORKER_MEMORY_MB` | `1024` (256 to 16384) |
/// | an image worker's CPU time | `FITBASE_IMAGE_WORKER_CPU_SECONDS` | `20` (1 to 300) |
/// | largest workout video | `FITBASE_VIDEO_MAX_BYTES` | `2147483648` (2 GiB) |
package struct MediaConfiguration: Sendable {
    /// The store media objects live in.
    package enum Store: Sendable, Equatable {
        /// A directory (`<data dir>/media` unless set).
        case local(directory: String?)
        /// An S3-compatible bucket and the credentials requests are signed with.
        case s3(S3Location, AWSCredentials)
    }

    package var store: Store = .local(directory: nil)
    /// How long a signed media link (FitBase's own or a presigned S3 URL) stays valid.
    package var linkLifetime: Duration = .seconds(3600)
    /// The largest profile photo accepted, in bytes.
    package var photoMaxBytes = 10 << 20
    /// The largest width or height of a profile photo (a small file claiming huge dimensions is refused).
    package var photoMaxPixels = 8192
    /// The largest workout video accepted, in bytes (streamed to the store, never held in memory).
    package var videoMaxBytes: Int64 = 2 << 30
    /// The most pixels a photo's decoder may hold (the size the decoder reads, checked before it allocates).
    package var photoMaxDecodedPixels = 50_000_000
    /// The executable run as an image worker (``ImageWorker``): the server's own binary.
    package var imageWorker = MediaConfiguration.defaultImageWorker
    /// An image worker's address-space limit, in bytes.
    package var imageWorkerMemoryBytes = 1 << 30
    /// An image worker's CPU-time limit, in seconds.
    package var imageWorkerCPUSeconds = 20

    /// `fitbase` beside the running executable: the executable itself when it is `fitbase`, the built one beside a
    /// test runner or a benchmark in `.build/<configuration>/`.
    package static var defaultImageWorker: String {
        let executable = Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments.first ?? "fitbase")
        return executable.deletingLastPathComponent().appendingPathComponent("fitbase").path
    }

    package init() {}

    /// The settings in `environment`; an invalid one throws naming it.
    static func resolve(environment: [String: String]) throws(ConfigurationError) -> MediaConfiguration {
        var configuration = MediaConfiguration()
        if let text = environment["FITBASE_STORAGE_URL"]?.trimmingCharacters(in: .whitespaces), !text.isEmpty {
            if text.lowercased().hasPrefix("s3://") {
                guard let location = S3Location(parsing: text) else {
                    throw ConfigurationError(
                        setting: "storage-url", source: "FITBASE_STORAGE_URL", value: text,
                        expected: "s3://bucket?region=REGION&endpoint=http(s)://host:port (endpoint and path-style=true|false optional), or a directory path"
                    )
                }
                guard let credentials = AWSCredentials(environment: environment) else {
                    throw ConfigurationError(
                        setting: "storage-url", source: "FITBASE_STORAGE_URL", value: text,
                        expected: "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY set for an s3:// store")
                }
                configuration.store = .s3(location, credentials)
            } else {
                let path = text.hasPrefix("file://") ? String(text.dropFirst("file://".count)) : text
                guard !path.isEmpty, !path.contains("://") else {
                    throw ConfigurationError(setting: "storage-url", source: "FITBASE_STORAGE_URL", value: text, expected: "s3://bucket?… or a directory path")
                }
                configuration.store = .local(directory: path)
            }
        }
        if let text = environment["FITBASE_MEDIA_LINK_SECONDS"] {
            guard let seconds = Int(text.trimmingCharacters(in: .whitespaces)), (60...604_800).contains(seconds) else {
                throw ConfigurationError(setting: "media-link-seconds", source: "FITBASE_MEDIA_LINK_SECONDS", value: text, expected: "a number of seconds from 60 to 604800")
            }
            configuration.linkLifetime = .seconds(seconds)
        }
        if let text = environment["FITBASE_PHOTO_MAX_BYTES"] {
            guard let bytes = Int(text.trimmingCharacters(in: .whitespaces)), (1024...(100 << 20)).contains(bytes) else {
                throw ConfigurationError(setting: "photo-max-bytes", source: "FITBASE_PHOTO_MAX_BYTES", value: text, expected: "a number of bytes from 1024 to 104857600")
            }
            configuration.photoMaxBytes = bytes
        }
        if let text = environment["FITBASE_PHOTO_MAX_PIXELS"] {
            guard let pixels = Int(text.trimmingCharacters(in: .whitespaces)), (64...65_535).contains(pixels) else {
                throw ConfigurationError(setting: "photo-max-pixels", source: "FITBASE_PHOTO_MAX_PIXELS", value: text, expected: "a number of pixels from 64 to 65535")
            }
            configuration.photoMaxPixels = pixels
        }
        if let text = environment["FITBASE_VIDEO_MAX_BYTES"] {
            guard let bytes = Int64(text.trimmingCharacters(in: .whitespaces)), (1 << 20...100 << 30).contains(bytes) else {
                throw ConfigurationError(setting: "video-max-bytes", source: "FITBASE_VIDEO_MAX_BYTES", value: text, expected: "a number of bytes from 1048576 to 107374182400")
            }
            configuration.videoMaxBytes = bytes
        }
        if let text = environment["FITBASE_PHOTO_MAX_DECODED_PIXELS"] {
            guard let pixels = Int(text.trimmingCharacters(in: .whitespaces)), (4096...(1 << 30)).contains(pixels) else {
                throw ConfigurationError(
                    setting: "photo-max-decoded-pixels", source: "FITBASE_PHOTO_MAX_DECODED_PIXELS", value: text,
                    expected: "a number of pixels from 4096 to 1073741824")
            }
            configuration.photoMaxDecodedPixels = pixels
        }
        if let text = environment["FITBASE_IMAGE_WORKER_MEMORY_MB"] {
            guard let megabytes = Int(text.trimmingCharacters(in: .whitespaces)), (256...16_384).contains(megabytes) else {
                throw ConfigurationError(
                    setting: "image-worker-memory-mb", source: "FITBASE_IMAGE_WORKER_MEMORY_MB", value: text,
                    expected: "a number of megabytes from 256 to 16384")
            }
            configuration.imageWorkerMemoryBytes = megabytes << 20
        }
        if let text = environment["FITBASE_IMAGE_WORKER_CPU_SECONDS"] {
            guard let seconds = Int(text.trimmingCharacters(in: .whitespaces)), (1...300).contains(seconds) else {
                throw ConfigurationError(
                    setting: "image-worker-cpu-seconds", source: "FITBASE_IMAGE_WORKER_CPU_SECONDS", value: text,
                    expected: "a number of seconds from 1 to 300")
            }
            configuration.imageWorkerCPUSeconds = seconds
        }
        let worker = environment["FITBASE_IMAGE_WORKER"]?.trimmingCharacters(in: .whitespaces) ?? ""
        if !worker.isEmpty { configuration.imageWorker = worker }
        guard FileManager.default.isExecutableFile(atPath: configuration.imageWorker) else {
            throw ConfigurationError(
                setting: "image-worker", source: worker.isEmpty ? "FITBASE_IMAGE_WORKER (unset: beside the executable)" : "FITBASE_IMAGE_WORKER",
                value: configuration.imageWorker, expected: "the path of the fitbase executable, which decodes photos in a worker process")
        }
        return configuration
    }

    /// How image workers run under these settings.
    var imageWorkerSettings: ContainedThumbnailer.Settings {
        ContainedThumbnailer.Settings(
            executable: imageWorker, memoryBytes: imageWorkerMemoryBytes, cpuSeconds: imageWorkerCPUSeconds,
            limits: DecodeLimits(maxSide: photoMaxPixels, maxPixels: photoMaxDecodedPixels))
    }
}
