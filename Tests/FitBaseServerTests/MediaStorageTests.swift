import AsyncHTTPClient
import FitBaseSigV4
import FitBaseTestSupport
import Foundation
import NIOCore
import NIOHTTP1
import Testing

@testable import FitBaseServer

/// The media stores themselves, on every back end: streamed writes (multipart for large bodies), reads whole and in
/// ranges, listing, deletion, and nothing left behind by a failed write.
@Suite struct MediaStorageTests {
    /// A store of `backend` with small multipart parts (5 MiB, S3's least), in a fresh directory or bucket.
    static func withStore(_ backend: MediaBackend, _ test: (any MediaStorage) async throws -> Void) async throws {
        switch backend {
        case .local:
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fitbase-media-\(UUID().uuidString)").path
            defer { try? FileManager.default.removeItem(atPath: directory) }
            try await test(LocalMediaStorage(root: directory))
        case .s3:
            let (location, credentials) = try await MediaBackend.freshS3Bucket(client: .shared)
            try await test(S3MediaStorage(location: location, credentials: credentials, client: .shared, partSize: 5 << 20))
        }
    }

    /// `count` bytes of a repeating pattern, in chunks of `chunk` bytes.
    static func pattern(_ count: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) }
    }

    static func chunks(_ bytes: [UInt8], of size: Int = 64 * 1024) -> [ByteBuffer] {
        stride(from: 0, to: bytes.count, by: size).map { ByteBuffer(bytes: bytes[$0..<min($0 + size, bytes.count)]) }
    }

    static func key(_ text: String) throws -> MediaKey {
        try #require(MediaKey(text))
    }

    @Test(arguments: MediaBackend.all)
    func putGetRangeListDelete(backend: MediaBackend) async throws {
        try await Self.withStore(backend) { store in
            let bytes = Self.pattern(300_000)
            let stored = try await store.put(try Self.key("users/a/photo/1.jpg"), contentType: "image/jpeg", body: Self.chunks(bytes).async)
            #expect(stored.size == 300_000)
            _ = try await store.put(try Self.key("users/a/photo/2.png"), contentType: "image/png", body: [ByteBuffer(string: "png")].async)
            _ = try await store.put(try Self.key("users/ab/photo/1.jpg"), contentType: "image/jpeg", body: [ByteBuffer(string: "x")].async)

            let whole = try #require(try await store.get(try Self.key("users/a/photo/1.jpg"), range: nil))
            #expect(whole.size == 300_000)
            #expect(whole.contentType == "image/jpeg")
            #expect(Array(try await whole.collect(upTo: 1 << 20).readableBytesView) == bytes)

            let middle = try #require(try await store.get(try Self.key("users/a/photo/1.jpg"), range: .from(1000, through: 1999)))
            #expect(middle.range == 1000...1999)
            #expect(Array(try await middle.collect(upTo: 1 << 20).readableBytesView) == Array(bytes[1000...1999]))
            let tail = try #require(try await store.get(try Self.key("users/a/photo/1.jpg"), range: .suffix(10)))
            #expect(Array(try await tail.collect(upTo: 100).readableBytesView) == Array(bytes.suffix(10)))
            let open = try #require(try await store.get(try Self.key("users/a/photo/1.jpg"), range: .from(299_990, through: 400_000)))
            #expect(open.range == 299_990...299_999)
            await #expect(throws: MediaStorageError.rangeNotSatisfiable(size: 300_000)) {
                _ = try await store.get(try Self.key("users/a/photo/1.jpg"), range: .from(300_000, through: nil))
            }
            #expect(try await store.get(try Self.key("users/a/photo/none.jpg"), range: nil) == nil)

            #expect(try await store.list(prefix: "users/a/").map(\.key.path) == ["users/a/photo/1.jpg", "users/a/photo/2.png"])
            #expect(try await store.list(prefix: "users/a").map(\.key.path) == ["users/a/photo/1.jpg", "users/a/photo/2.png", "users/ab/photo/1.jpg"])
            #expect(try await store.list(prefix: "users/a/photo/2").map(\.size) == [3])

            try await store.deleteAll(prefix: "users/a/")
            try await store.delete(try Self.key("users/a/photo/none.jpg"))
            #expect(try await store.list(prefix: "users/").map(\.key.path) == ["users/ab/photo/1.jpg"])
        }
    }

    @Test(arguments: MediaBackend.all)
    func aLargeBodyIsStreamedInParts(backend: MediaBackend) async throws {
        try await Self.withStore(backend) { store in
            // 12 MiB and a bit: two whole 5 MiB parts and a short last one on S3.
            let bytes = Self.pattern(12 << 20 + 12_345)
            let key = try Self.key("catalog/w1/video.mp4")
            let stored = try await store.put(key, contentType: "video/mp4", body: Self.chunks(bytes, of: 1 << 20).async)
            #expect(stored.size == Int64(bytes.count))
            #expect(try await store.list(prefix: "catalog/").map(\.size) == [Int64(bytes.count)])
            let range = try #require(try await store.get(key, range: .from(5 << 20 - 100, through: 5 << 20 + 99)))
            #expect(Array(try await range.collect(upTo: 1000).readableBytesView) == Array(bytes[(5 << 20 - 100)...(5 << 20 + 99)]))
            let whole = try #require(try await store.get(key, range: nil))
            #expect(whole.contentType == "video/mp4")
            var digest = [UInt8]()
            try await whole.read { chunk in digest.append(contentsOf: chunk.readableBytesView) }
            #expect(digest == bytes)
        }
    }

    /// A local file is read a chunk ahead of the writer and opened only while it is read: a reader that stops after
    /// the first chunk, or one that finds the file cut short since its size was read, leaves no descriptor open, and
    /// the cut-short read fails instead of delivering fewer bytes than the range promised.
    @Test func aLocalReadStoppedOrCutShortLeavesNoFileOpen() async throws {
        try await Self.withStore(.local) { store in
            let bytes = Self.pattern(3 << 20 + 7)
            let key = try Self.key("catalog/w2/video.mp4")
            _ = try await store.put(key, contentType: "video/mp4", body: Self.chunks(bytes, of: 1 << 20).async)
            let file = try #require(store as? LocalMediaStorage).root + "/" + key.path
            func isOpen() -> Bool {
                let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
                return descriptors.contains { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0)) == file }
            }
            struct Stop: Error {}
            let whole = try #require(try await store.get(key, range: nil))
            var received = 0
            await #expect(throws: Stop.self) {
                try await whole.read { chunk in
                    received += chunk.readableBytes
                    throw Stop()
                }
            }
            #expect(received == 1 << 20)
            #expect(!isOpen())

            let spanning = try #require(try await store.get(key, range: .from(1 << 20 - 5, through: 2 << 20 + 4)))
            #expect(Array(try await spanning.collect(upTo: 2 << 20).readableBytesView) == Array(bytes[(1 << 20 - 5)...(2 << 20 + 4)]))
            #expect(!isOpen())

            let cut = try #require(try await store.get(key, range: nil))
            #expect(truncate(file, 1 << 20 + 10) == 0)
            await #expect(throws: MediaStorageError.self) { _ = try await cut.collect(upTo: 4 << 20) }
            #expect(!isOpen())
        }
    }

    @Test(arguments: MediaBackend.all)
    func aFailedWriteLeavesNothing(backend: MediaBackend) async throws {
        try await Self.withStore(backend) { store in
            for size in [100_000, 11 << 20] {
                let key = try Self.key("users/b/cut-\(size).bin")
                await #expect(throws: CutOff.self) {
                    _ = try await store.put(key, contentType: "application/octet-stream", body: CutOffBody(chunks: Self.chunks(Self.pattern(size))))
                }
                #expect(try await store.get(key, range: nil) == nil)
            }
            #expect(try await store.list(prefix: "").isEmpty)
        }
    }

    @Test(.enabled(if: MediaBackend.s3URL != nil, "\(MediaBackend.s3Skipped)"))
    func aPresignedURLReadsTheObjectAndRanges() async throws {
        try await Self.withStore(.s3) { store in
            let key = try Self.key("users/c/photo/1.jpg")
            _ = try await store.put(key, contentType: "image/jpeg", body: [ByteBuffer(string: "jpeg bytes")].async)
            let url = try #require(store.presignedURL(for: key, expires: .seconds(60), now: Date()))
            let fetched = try await HTTPClient.shared.execute(HTTPClientRequest(url: url), timeout: .seconds(30))
            #expect(fetched.status == .ok)
            #expect(String(buffer: try await fetched.body.collect(upTo: 1000)) == "jpeg bytes")
            var ranged = HTTPClientRequest(url: url)
            ranged.headers.add(name: "Range", value: "bytes=5-9")
            let part = try await HTTPClient.shared.execute(ranged, timeout: .seconds(30))
            #expect(part.status == .partialContent)
            #expect(String(buffer: try await part.body.collect(upTo: 1000)) == "bytes")
            // (moto checks neither signatures nor expiry; the signature of these URLs is checked against botocore's in
            // FitBaseSigV4Tests, and their expiry is S3's to enforce.)
            #expect(url.contains("X-Amz-Expires=60"))
        }
    }

    @Test func keysAreSafePaths() {
        #expect(MediaKey("users/0b7f/photo/3.jpg") != nil)
        #expect(["a/1.JPG", "a/1.jpeg", "a/1.png", "a/1.Heic", "a/1.mp4", "a/1.mov", "a/1.webp", "a/1.jpgx", "a.png/1", "a/1"].compactMap { MediaKey($0)?.contentType } == [
            "image/jpeg", "image/jpeg", "image/png", "image/heic", "video/mp4", "video/quicktime", "image/webp", "application/octet-stream",
            "application/octet-stream", "application/octet-stream",
        ])
        for bad in [
            "", "/users", "users//a", "users/../a", "users/./a", "users/a b", "users/ä", "users/a/", String(repeating: "a", count: 513), ".", "..",
            "a/..", "./a", "a/.",
        ] {
            #expect(MediaKey(bad) == nil, "\(bad)")
            #expect(MediaKey(bytes: Array(bad.utf8)) == nil, "\(bad)")
        }
        for good in ["...", "a/.../b", ".a/b.", "a..b/..c", String(repeating: "a", count: 512)] {
            #expect(MediaKey(good)?.path == good)
            #expect(MediaKey(bytes: Array(good.utf8))?.path == good)
        }
    }

    /// The links' own base64url decoder agrees with Foundation's on every length, padded or not, and refuses what
    /// Foundation refuses.
    @Test func base64URLDecodesAsFoundationDoes() {
        var generator = SystemRandomNumberGenerator()
        for length in 0..<70 {
            let bytes = (0..<length).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
            let encoded = Data(bytes).base64URLEncoded
            #expect(Base64URL.decode(encoded.utf8) == bytes)
            let padded = Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            #expect(Base64URL.decode(padded.utf8) == bytes)
        }
        // ("AB" and "AAB": bits set past the last byte, so a second spelling of "AA" and "AAA".)
        for bad in ["a", "abcde", "ab=c", "a=bc", "ab+c", "ab/c", "ab c", "abc==", "ab===", "=abc", "ä", "AB", "AAB", "AB==", "AAB="] {
            #expect(Base64URL.decode(bad.utf8) == nil, "\(bad)")
            #expect(Data(base64URLEncoded: bad) == nil, "\(bad)")
        }
    }

    @Test func rangeHeaders() {
        #expect(MediaByteRange(header: "bytes=0-99") == .from(0, through: 99))
        #expect(MediaByteRange(header: "bytes=100-") == .from(100, through: nil))
        #expect(MediaByteRange(header: "bytes=-5") == .suffix(5))
        #expect(MediaByteRange(header: " BYTES=0-99\t") == .from(0, through: 99))
        for ignored in [
            "bytes=5-1", "bytes=0-1,5-6", "items=0-1", "bytes=-0", "bytes=a-b", "bytes=", "bytes=+5-9", "bytes=1-2-3", "bytes=-", "bytes\u{1D}0-1",
            "bytes= 0-1", "bytes=9999999999999999999-",
        ] {
            #expect(MediaByteRange(header: ignored) == nil, "\(ignored)")
        }
        #expect(MediaByteRange.suffix(500).resolved(size: 100) == 0...99)
        #expect(MediaByteRange.from(0, through: nil).resolved(size: 0) == nil)
    }

    @Test func storageURLs() throws {
        let moto = try #require(S3Location(parsing: "s3://fitbase-media?region=eu-central-1&endpoint=http://127.0.0.1:5055"))
        #expect(moto.host == "127.0.0.1:5055")
        #expect(moto.path(of: try Self.key("a/b.jpg")) == "/fitbase-media/a/b.jpg")
        let aws = try #require(S3Location(parsing: "s3://fitbase-media?region=eu-central-1"))
        #expect(aws.endpoint == "https://fitbase-media.s3.eu-central-1.amazonaws.com")
        #expect(aws.host == "fitbase-media.s3.eu-central-1.amazonaws.com")
        #expect(aws.path(of: try Self.key("a/b.jpg")) == "/a/b.jpg")
        for bad in ["s3://", "s3://UPPER", "s3://ok-bucket?endpoint=ftp://x", "s3://ok-bucket?color=red", "s3://ok-bucket/path"] {
            #expect(S3Location(parsing: bad) == nil, "\(bad)")
        }
        #expect(throws: ConfigurationError.self) {
            try MediaConfiguration.resolve(environment: ["FITBASE_STORAGE_URL": "s3://fitbase-media"])
        }
        let resolved = try MediaConfiguration.resolve(environment: [
            "FITBASE_STORAGE_URL": "s3://fitbase-media", "AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "secret",
        ])
        #expect(resolved.store == .s3(try #require(S3Location(parsing: "s3://fitbase-media")), AWSCredentials(accessKeyID: "AKID", secretAccessKey: "secret")))
        #expect(throws: ConfigurationError.self) { try MediaConfiguration.resolve(environment: ["FITBASE_MEDIA_LINK_SECONDS": "5"]) }
    }
}

private struct CutOff: Error {}

/// Chunks, then an error half-way: a client that went away mid-upload.
private struct CutOffBody: AsyncSequence, Sendable {
    let chunks: [ByteBuffer]

    struct AsyncIterator: AsyncIteratorProtocol {
        var remaining: ArraySlice<ByteBuffer>
        var cutAt: Int

        mutating func next() async throws -> ByteBuffer? {
            guard remaining.count > cutAt else { throw CutOff() }
            return remaining.popFirst()
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(remaining: chunks[...], cutAt: chunks.count / 2)
    }
}

extension Array where Element: Sendable {
    /// The elements as an async sequence (a body as a client would stream it).
    var async: AsyncStream<Element> {
        AsyncStream { continuation in
            for element in self { continuation.yield(element) }
            continuation.finish()
        }
    }
}
