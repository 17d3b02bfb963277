import FitBaseCore
import FitBaseTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import FitBaseServer

/// Photos made to stop or swell the server, played over HTTP as an ordinary account would send them: each is refused
/// with a problem naming `photo`, nothing is stored, and the server keeps answering.
@Suite struct HostileUploadTests {
    /// A 36-byte HEIC whose `meta` box is too short to hold its own version and flags (its content range would run
    /// backwards).
    static let shortMetaHEIC: [UInt8] =
        TestImages.box("ftyp", Array("heic".utf8) + TestImages.be32(0) + Array("mif1".utf8)) + TestImages.box("meta", [])
        + TestImages.box("mdat", [])

    /// A HEIC whose `ispe` declares 4294967295×4294967295 (their product overflows a 64-bit integer).
    static let overflowingExtentHEIC: [UInt8] = TestImages.heic(width: 0xFFFF_FFFF, height: 0xFFFF_FFFF)

    /// A progressive JPEG whose first frame header says 30000×30000 (what libjpeg decodes) and whose last says 300×300.
    static let progressiveBomb: [UInt8] = twoFrameJPEG(first: (30000, 30000), last: (300, 300), firstMarker: 0xC2)

    /// A baseline JPEG with two frame headers, the second of a different size.
    static let baselineTwoFrames: [UInt8] = twoFrameJPEG(first: (300, 300), last: (200, 200), firstMarker: 0xC0)

    static func twoFrameJPEG(first: (Int, Int), last: (Int, Int), firstMarker: UInt8) -> [UInt8] {
        var bytes: [UInt8] = [0xFF, 0xD8]
        bytes += TestImages.segment(0xDB, [0x00] + [UInt8](repeating: 1, count: 64))
        bytes += TestImages.segment(firstMarker, [8] + TestImages.be16(first.1) + TestImages.be16(first.0) + [1, 1, 0x11, 0])
        bytes += TestImages.segment(0xC4, [0x00] + [1] + [UInt8](repeating: 0, count: 15) + [0])
        bytes += TestImages.segment(0xDA, [1, 1, 0x00, 0, 63, 0])
        bytes += [0x12, 0x34, 0x56]
        bytes += TestImages.segment(0xC0, [8] + TestImages.be16(last.1) + TestImages.be16(last.0) + [1, 1, 0x11, 0])
        bytes += TestImages.segment(0xDA, [1, 1, 0x00, 0, 63, 0])
        bytes += [0x78, 0x9A, 0xFF, 0xD9]
        return bytes
    }

    /// A HEIC grid whose `ispe` says 300×300 and whose canvas is 16000×16000.
    static let gridBomb: [UInt8] = TestImages.heicGrid(declared: (300, 300), canvas: (16000, 16000))

    @Test(arguments: TestEngines.all)
    func hostilePhotosAreRefusedAndTheServerKeepsAnswering(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, app in
            let account = try await client.signUp()
            let cases: [(name: String, bytes: [UInt8], message: String)] = [
                ("short meta box", Self.shortMetaHEIC, "is cut off or damaged"),
                ("overflowing ispe", Self.overflowingExtentHEIC, "is 4294967295×4294967295 pixels"),
                ("progressive bomb", Self.progressiveBomb, "is cut off or damaged: the JPEG has more than one frame header"),
                ("two frames", Self.baselineTwoFrames, "is cut off or damaged: the JPEG has more than one frame header"),
                ("grid bomb", Self.gridBomb, "is 16000×16000 pixels"),
            ]
            for (name, bytes, message) in cases {
                let response = try await ProfilePhotoTests.upload(client, bytes, token: account.accessToken)
                let problem = try expectProblem(response, .validationFailed)
                let errors = try #require(problem["errors"] as? [[String: String]], "\(name)")
                #expect(errors.first?["field"] == "photo", "\(name)")
                #expect(errors.first?["message"]?.hasPrefix(message) == true, "\(name): \(errors)")
                #expect(try await client.execute(uri: "/healthz", method: .get).status == .ok)
            }
            #expect(try await ProfilePhotoTests.objects(of: account.id, in: app).isEmpty)
        }
    }

    /// A photo is served as what it is, never sniffed into a page, and nothing in it may run on the console's origin:
    /// through the router and ahead of it alike.
    @Test(arguments: TestEngines.all)
    func mediaAnswersForbidSniffingAndRunNothing(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, app in
            let account = try await client.signUp()
            // HTML inside an image's comment: a browser sniffing it would have a page on the console's origin.
            let page = TestImages.jpeg(width: 100, height: 80) + Array("<html><script>alert(1)</script></html>".utf8)
            #expect(try await ProfilePhotoTests.upload(client, page, token: account.accessToken).status == .ok)
            let link = try await ProfilePhotoTests.link(client, of: account.id, token: account.accessToken)
            for range in [nil, "bytes=0-9"] {
                let answer = try await ProfilePhotoTests.fetch(client, try #require(link["url"] as? String), range: range)
                #expect(answer.status == (range == nil ? 200 : 206))
                #expect(answer.headers["x-content-type-options"] == "nosniff")
                let policy = try #require(answer.headers["content-security-policy"])
                #expect(policy.contains("sandbox") && policy.contains("default-src 'none'"))
            }
        }
    }

    /// A 14 KB 1-bit PNG of 7000×7000: within the side limit, 49 M pixels (196 MB as the RGBA libpng decodes to).
    static func decodesLarge() throws -> [UInt8] {
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/decodes-to-7000x7000.png")
        return [UInt8](try Data(contentsOf: fixture))
    }

    @Test(.enabled(if: PhotoThumbnailTests.hasPNG, "libpng16.so.16 is not installed"), arguments: TestEngines.all)
    func aPhotoItsDecoderWouldHoldPastTheLimitIsRefusedByTheDecodersOwnReading(engine: DatabaseEngine) async throws {
        var options = TestAppOptions()
        options.configure = { $0.media.photoMaxDecodedPixels = 40_000_000 }
        try await withApp(engine, options: options) { client, app in
            let account = try await client.signUp()
            let problem = try expectProblem(
                try await ProfilePhotoTests.upload(client, try Self.decodesLarge(), token: account.accessToken), .validationFailed)
            let errors = try #require(problem["errors"] as? [[String: String]])
            #expect(errors.first?["message"] == "decodes to 7000×7000 pixels, more than may be decoded")
            #expect(try await ProfilePhotoTests.objects(of: account.id, in: app).isEmpty)
        }
    }

    /// The worker's own limits are the last fence: with the pixel limit out of the way and 256 MB of address space, a
    /// photo that needs 196 MB of pixels (and more to scale them) kills its worker, which costs that upload a problem,
    /// and the next upload is served as before (the server's memory is measured by `scripts/bench/bench-photo.sh`: this
    /// process runs other tests at the same time).
    @Test(.enabled(if: PhotoThumbnailTests.hasPNG, "libpng16.so.16 is not installed"))
    func aWorkerThatRunsOutOfMemoryCostsOnlyItsUpload() async throws {
        var options = TestAppOptions()
        options.configure = {
            $0.media.photoMaxDecodedPixels = 1 << 30
            $0.media.imageWorkerMemoryBytes = 256 << 20
        }
        try await withApp(.sqlite, options: options) { client, app in
            let account = try await client.signUp()
            let problem = try expectProblem(
                try await ProfilePhotoTests.upload(client, try Self.decodesLarge(), token: account.accessToken), .validationFailed)
            let errors = try #require(problem["errors"] as? [[String: String]])
            #expect(errors.first?["message"] == "could not be decoded: decoding it needed more than the limits allow")
            // The next photo is made as before.
            let fine = try await ProfilePhotoTests.upload(client, try PhotoThumbnailTests.realPNG(width: 600, height: 400), token: account.accessToken)
            #expect(fine.status == .ok)
        }
    }

    @Test func theImageWorkerSettingsAreReadAndAMissingWorkerFailsAtStartNamingIt() throws {
        let configuration = try MediaConfiguration.resolve(environment: [
            "FITBASE_PHOTO_MAX_DECODED_PIXELS": "30000000", "FITBASE_IMAGE_WORKER_MEMORY_MB": "512",
            "FITBASE_IMAGE_WORKER_CPU_SECONDS": "3",
        ])
        #expect(configuration.imageWorkerSettings.limits == DecodeLimits(maxSide: 8192, maxPixels: 30_000_000))
        #expect(configuration.imageWorkerSettings.memoryBytes == 512 << 20)
        #expect(configuration.imageWorkerSettings.cpuSeconds == 3)
        #expect(throws: ConfigurationError.self) { try MediaConfiguration.resolve(environment: ["FITBASE_IMAGE_WORKER": "/nonexistent/fitbase"]) }
        #expect(throws: ConfigurationError.self) { try MediaConfiguration.resolve(environment: ["FITBASE_IMAGE_WORKER_MEMORY_MB": "10"]) }
    }
}
