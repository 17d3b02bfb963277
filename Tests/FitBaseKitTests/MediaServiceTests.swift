import FitBaseClient
import FitBaseCore
import FitBaseKit
import FitBaseTestSupport
import Foundation
import Synchronization
import Testing

/// The image cache (bounded tiers, eviction, keys that change with the content), the fake media service, and the live
/// one against a real server: a photo uploaded with progress, read once and then from the cache, a new photo read
/// anew, the same photo uploaded again after a removal read from the cache.
@Suite struct MediaServiceTests {
    static let alice = UserID(rawValue: UUID(uuidString: "00000000-0000-4000-8000-00000000a11c")!)

    static func key(_ digest: String, _ size: PhotoSize = .full) -> MediaCacheKey { .photo(alice, digest: digest, size: size) }

    static func temporaryDirectory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("fitbase-images-\(UUID().uuidString)", isDirectory: true)
    }

    /// A structurally valid baseline JPEG of `width`×`height` (what the server checks; it needs no decoding here).
    static func jpeg(width: Int = 640, height: Int = 480) -> Data {
        func be16(_ value: Int) -> [UInt8] { [UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
        func segment(_ marker: UInt8, _ payload: [UInt8]) -> [UInt8] { [0xFF, marker] + be16(payload.count + 2) + payload }
        var bytes: [UInt8] = [0xFF, 0xD8]
        bytes += segment(0xE0, Array("JFIF\0".utf8) + [1, 1, 0, 0, 1, 0, 1, 0, 0])
        bytes += segment(0xDB, [0x00] + [UInt8](repeating: 1, count: 64))
        bytes += segment(0xC0, [8] + be16(height) + be16(width) + [1, 1, 0x11, 0])
        bytes += segment(0xC4, [0x00] + [1] + [UInt8](repeating: 0, count: 15) + [0])
        bytes += segment(0xDA, [1, 1, 0x00, 0, 63, 0])
        bytes += [UInt8](repeating: 0x5A, count: 200 * 1024) + [0xFF, 0xD9]
        return Data(bytes)
    }

    // MARK: The cache

    @Test func theMemoryTierEvictsTheLeastRecentlyUsed() async {
        let cache = ImageCache(directory: nil, memoryLimit: 300, diskLimit: 0)
        await cache.store(Data(repeating: 1, count: 100), for: Self.key("a1"))
        await cache.store(Data(repeating: 2, count: 100), for: Self.key("b2"))
        await cache.store(Data(repeating: 3, count: 100), for: Self.key("c3"))
        // Reading a1 makes b2 the least recently used.
        #expect(await cache.data(for: Self.key("a1")) == Data(repeating: 1, count: 100))
        await cache.store(Data(repeating: 4, count: 100), for: Self.key("d4"))
        #expect(await cache.data(for: Self.key("b2")) == nil)
        #expect(await cache.data(for: Self.key("a1")) != nil)
        #expect(await cache.data(for: Self.key("c3")) != nil)
        #expect(await cache.usage.memoryBytes == 300)
        // Larger than the tier: not kept.
        await cache.store(Data(repeating: 5, count: 301), for: Self.key("e5"))
        #expect(await cache.data(for: Self.key("e5")) == nil)
        #expect(await cache.usage.memoryEntries == 3)
    }

    @Test func theDiskTierIsBoundedAndOutlivesTheProcess() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = ImageCache(directory: directory, memoryLimit: 1_000, diskLimit: 250)
        await cache.store(Data(repeating: 1, count: 100), for: Self.key("a1"))
        await cache.store(Data(repeating: 2, count: 100), for: Self.key("b2", .thumbnail))
        await cache.store(Data(repeating: 3, count: 100), for: Self.key("c3"))
        let usage = await cache.usage
        #expect(usage.diskBytes == 200 && usage.diskEntries == 2)
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        #expect(files == [Self.key("b2", .thumbnail).rawValue, Self.key("c3").rawValue])
        let attributes = try FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent(files[0]).path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)

        // A new launch: nothing in memory, the files still there and read back.
        let relaunched = ImageCache(directory: directory, memoryLimit: 1_000, diskLimit: 250)
        let launched = await relaunched.usage
        #expect(launched.memoryEntries == 0 && launched.diskBytes == 200)
        #expect(await relaunched.data(for: Self.key("c3")) == Data(repeating: 3, count: 100))
        #expect(await relaunched.usage.memoryEntries == 1)
        #expect(await relaunched.data(for: Self.key("a1")) == nil)

        await relaunched.removeAll()
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
        #expect(await relaunched.data(for: Self.key("c3")) == nil)
    }

    @Test func keysChangeWithTheContentAndTheSize() {
        #expect(Self.key("ab12") != Self.key("cd34"))
        #expect(Self.key("ab12", .thumbnail) != Self.key("ab12", .full))
        // Only hex survives from a digest: a key is always a safe file name.
        #expect(MediaCacheKey.photo(Self.alice, digest: "../AB12", size: .full).rawValue == "photo-\(Self.alice)-ab12-full")
    }

    // MARK: The fake

    @Test func theFakeUploadsWithProgressAndItsLinksExpire() async throws {
        let clock = TestKitClock()
        let fakes = FakeServices(scenario: .populated, clock: clock)
        let media = fakes.media
        let reports = Mutex<[UploadProgress]>([])
        let image = Self.jpeg()
        let photo = try await media.uploadProfilePhoto(image) { progress in reports.withLock { $0.append(progress) } }
        #expect(photo.version == 1 && photo.bytes == Int64(image.count))
        let seen = reports.withLock { $0 }
        #expect(seen.count == 4 && seen.last == UploadProgress(sent: Int64(image.count), total: Int64(image.count)))
        #expect(seen.map(\.sent) == seen.map(\.sent).sorted())

        let user = try #require(await fakes.auth.signedInUser()?.id)
        let link = try #require(try await media.profilePhoto(of: user, size: .full))
        #expect(link.cacheKey == .photo(user, digest: photo.digest, size: .full))
        #expect(try await media.imageData(link.cacheKey, link: link.link) == image)
        clock.advance(by: .seconds(3_600))
        await #expect(throws: KitError.self) { try await media.imageData(link.cacheKey, link: link.link) }
        // profilePhotoImage asks for a new link when the first is refused.
        #expect(try await media.profilePhotoImage(of: user, size: .thumbnail) == image)

        await #expect(throws: KitError.self) { try await media.uploadProfilePhoto(Data("not an image".utf8)) { _ in } }
        try await media.removeProfilePhoto()
        #expect(try await media.profilePhoto(of: user, size: .full) == nil)
    }

    // MARK: Live

    @Test func liveUploadReadThroughTheCacheAndReplace() async throws {
        try await LiveDevice.withServer { server, _ in
            let phone = try LiveDevice(server: server)
            defer { phone.remove() }
            let ana = try await phone.signUp()
            let media = phone.dependencies.media

            let reports = Mutex<[UploadProgress]>([])
            let image = Self.jpeg()
            let photo = try await media.uploadProfilePhoto(image) { progress in reports.withLock { $0.append(progress) } }
            let seen = reports.withLock { $0 }
            #expect(seen.count >= 4 && seen.last?.sent == Int64(image.count) && seen.allSatisfy { $0.total == Int64(image.count) })
            #expect(photo.version == 1 && photo.contentType == "image/jpeg" && photo.digest.count == 64)

            // Read once from the server, then from the cache while the photo is unchanged.
            let first = try #require(try await media.profilePhotoImage(of: ana.id, size: .full))
            #expect(first.count == Int(photo.bytes))
            #expect(phone.network.count("getMedia") == 1)
            #expect(try await media.profilePhotoImage(of: ana.id, size: .full) == first)
            #expect(phone.network.count("getMedia") == 1)

            // A new photo has a new digest: read anew. Removing and uploading the same bytes again starts the version
            // at 1 again, and the digest still names the image.
            let replaced = try await media.uploadProfilePhoto(Self.jpeg(width: 320, height: 240)) { _ in }
            #expect(replaced.version == 2 && replaced.digest != photo.digest)
            let second = try #require(try await media.profilePhotoImage(of: ana.id, size: .full))
            #expect(second != first && phone.network.count("getMedia") == 2)
            try await media.removeProfilePhoto()
            #expect(try await media.profilePhotoImage(of: ana.id, size: .full) == nil)
            let again = try await media.uploadProfilePhoto(image) { _ in }
            #expect(again.version == 1 && again.digest == photo.digest)
            #expect(try await media.profilePhotoImage(of: ana.id, size: .full) == first)
            #expect(phone.network.count("getMedia") == 2)

        }
    }
}
