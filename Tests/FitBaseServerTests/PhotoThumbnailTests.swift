import FitBaseCore
import FitBaseSigV4
import FitBaseTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

@testable import FitBaseServer

/// Photo sizes: real JPEG and PNG photos (made with the same system libraries) uploaded on every engine and back end
/// and served as thumbnails of the right pixel size, upright, with no EXIF; the size guard refusing a huge image
/// before anything decodes it; the photo served for both sizes without the libraries; area averaging itself.
@Suite struct PhotoThumbnailTests {
    static let libraries = SystemImageLibraries.shared
    static var hasJPEG: Bool { libraries.turboJPEG != nil }
    static var hasPNG: Bool { libraries.png != nil }

    /// A real JPEG of `width`×`height`: the left half red, the right half blue, with EXIF (orientation `orientation`,
    /// the secret in a GPS IFD) spliced in after SOI as a camera writes it.
    static func realJPEG(width: Int, height: Int, orientation: Int) throws -> [UInt8] {
        let codec = try #require(libraries.turboJPEG)
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                let at = (y * width + x) * 3
                if x < width / 2 { pixels[at] = 255 } else { pixels[at + 2] = 255 }
            }
        }
        let encoded = try #require(codec.encode(Pixels(width: width, height: height, channels: 3, bytes: pixels), quality: 90))
        let camera = TestImages.jpeg(width: width, height: height, orientation: orientation)
        // The camera JPEG's APP1 segments (EXIF with the secret, XMP), placed after the encoder's SOI.
        let exif = Array(camera[2..<JPEGCleanerProbe.endOfMetadata(camera)])
        return [0xFF, 0xD8] + exif + Array(encoded.dropFirst(2))
    }

    /// A real RGBA PNG of `width`×`height`: the top half opaque green, the bottom half fully transparent.
    static func realPNG(width: Int, height: Int) throws -> [UInt8] {
        let codec = try #require(libraries.png)
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        for y in 0..<(height / 2) {
            for x in 0..<width {
                let at = (y * width + x) * 4
                pixels[at + 1] = 255
                pixels[at + 3] = 255
            }
        }
        return try #require(codec.encode(Pixels(width: width, height: height, channels: 4, bytes: pixels)))
    }

    static func link(_ client: any TestClientProtocol, of user: String, size: String, token: String) async throws -> [String: Any] {
        let response = try await client.json(.get, "/v1/users/\(user)/photo?size=\(size)", token: token)
        try #require(response.status == .ok, "photo link answered \(response.status): \(String(buffer: response.body))")
        return try json(response)
    }

    @Test(.enabled(if: hasJPEG, "libturbojpeg.so.0 is not installed (Debian: libturbojpeg0)"), arguments: ProfilePhotoTests.setups)
    func aJPEGThumbnailHasTheRightSizeIsUprightAndCarriesNoEXIF(engine: DatabaseEngine, backend: MediaBackend) async throws {
        try await ProfilePhotoTests.withMediaApp(engine, backend) { client, app in
            let account = try await client.signUp()
            // Orientation 6: stored 1000×600, shown 600×1000.
            let photo = try Self.realJPEG(width: 1000, height: 600, orientation: 6)
            #expect(TestImages.contains(photo, TestImages.secret))
            #expect(try await ProfilePhotoTests.upload(client, photo, token: account.accessToken).status == .ok)

            let full = try await Self.link(client, of: account.id, size: "full", token: account.accessToken)
            #expect(full["size"] as? String == "full" && full["width"] as? Int == 1000 && full["height"] as? Int == 600)
            let small = try await Self.link(client, of: account.id, size: "thumbnail", token: account.accessToken)
            #expect(small["size"] as? String == "thumbnail" && small["contentType"] as? String == "image/jpeg")
            #expect(small["width"] as? Int == 154 && small["height"] as? Int == 256)
            #expect((small["photo"] as? [String: Any])?["digest"] as? String == (full["photo"] as? [String: Any])?["digest"] as? String)

            let fetched = try await ProfilePhotoTests.fetch(client, try #require(small["url"] as? String))
            #expect(fetched.status == 200 && fetched.headers["content-type"] == "image/jpeg")
            let size = try ImageInspector(maxPixels: 8192).inspect(fetched.bytes)
            #expect(size.width == 154 && size.height == 256)
            // No APP1 at all (no EXIF, no XMP), nothing of the secret.
            #expect(!Self.hasSegment(fetched.bytes, marker: 0xE1))
            #expect(!TestImages.contains(fetched.bytes, TestImages.secret))
            // Upright: turned 90° clockwise, the red left half is now the top.
            let pixels = try #require(try Self.decodeJPEG(fetched.bytes, atLeast: (154, 256)))
            let top = (10 * pixels.width + pixels.width / 2) * 3, bottom = ((pixels.height - 10) * pixels.width + pixels.width / 2) * 3
            #expect(pixels.bytes[top] > 200 && pixels.bytes[top + 2] < 60)
            #expect(pixels.bytes[bottom + 2] > 200 && pixels.bytes[bottom] < 60)

            // Both objects under the user's prefix; both go with a new photo and with the account.
            let objects = try await ProfilePhotoTests.objects(of: account.id, in: app)
            #expect(objects.count == 2 && objects.contains { $0.hasSuffix("-thumb.jpg") })
            #expect(try await ProfilePhotoTests.upload(client, try Self.realJPEG(width: 300, height: 200, orientation: 1), token: account.accessToken).status == .ok)
            #expect(try await ProfilePhotoTests.objects(of: account.id, in: app).count == 2)
            #expect(try await client.json(.delete, "/v1/me/photo", token: account.accessToken).status == .noContent)
            #expect(try await ProfilePhotoTests.objects(of: account.id, in: app).isEmpty)
        }
    }

    static var hasHEIF: Bool { libraries.heif != nil && hasJPEG }

    /// A real 320×240 HEIC (made with libheif's `heif-enc -q 50` from a PNG): red rising left to right, green top to
    /// bottom, blue 0 in the left half and 255 in the right.
    static let realHEIC: [UInt8] = Array(
        Data(
            base64Encoded: [
                "AAAAHGZ0eXBoZWljAAAAAG1pZjFoZWljbWlhZgAAAUJtZXRhAAAAAAAAACFoZGxyAAAAAAAAAABwaWN0AAAAAAAAAAAAAAAAAAAA",
                "AA5waXRtAAAAAAABAAAAImlsb2MAAAAAREAAAQABAAAAAAFmAAEAAAAAAAAD2AAAACNpaW5mAAAAAAABAAAAFWluZmUCAAAAAAEA",
                "AGh2YzEAAAAAwmlwcnAAAACkaXBjbwAAAHhodmNDAQNwAAAAAAAAAAAAPPAA/P34+AAADwMgAAEAGEABDAH//wNwAAADAJAAAAMA",
                "AAMAPLoCQCEAAQArQgEBA3AAAAMAkAAAAwAAAwA8oAoIDxZbqSSmubgQEDAgAAADACAAAAMAISIAAQAHRAHBcrBiQAAAABRpc3Bl",
                "AAAAAAAAAUAAAADwAAAAEHBpeGkAAAAAAwgICAAAABZpcG1hAAAAAAAAAAEAAQOBAoMAAAPgbWRhdAAAA9QoAa8TIJi7zdt5oqOm",
                "+enWZB+8P1f+Qs0glYiinYfSX/6HMInrs7Y7UBAvikP7rGx2Kqky6BQuTk6+xs2OnUp4gNTL8EPatOjhe6kvu7Lu+yz1TKDP45Po",
                "xHsu80iXgt6AndrwHb6loy37UriUdufNHXuZMm54pN2/rgX9eMHoYeFFuaINjPXWYvj0G7dPNbUhjRqW03H/JmOx+UiDUFEmhqpM",
                "tJJbIFjPijWMGR/7RhOPHj3b84e8OiKwBkOQXlsLxmV/9q93FtDQROCu/OuvTNU2BDHuX+3euPKWbIfyY7IfgqdAc9xxf6tlCwFV",
                "bYt/k7FQO1JZBqObv5OW9JB211aADEFAWFmtt3JKt7sQC4RYIjqQ0OhOl/J7DX49aSxFTCVo2Tk1UwSAbLF8feV26ebpRqS4thjf",
                "7Zlb3dciQiv9D+U7DPl3n0xhKozFenSXeHnw/V+BFA8/cjxek3rsuL6se8rS9GGvyjcZqgvfg9s1hV0fAmTYYeakulG3BWdXyIHL",
                "iBdAXnOvHvYZMGgPpClJV6cxO+j6pSXS/MO+5MDEi9VOULLFf8ZbDN+HF0R+3vjV3H58QrZxTwxllGsYt0t+cli5gelnLCbO/bE/",
                "EQgpqnRZfssnl8NOwn0FIJCPMpZ93mKN9J+GOmtHGC1PeBkLFawwGhFkbfKkNVwAE2lVsrTR+D4Nl1s33VZGjsue1p+YINkIT7ky",
                "dVdeykybLmFT+fNAF7+ydaLhpXUairr2e6nFT9SjOTWMMqGQ9f7SddxDu42aHlz3o8Q8U+S+KYslYKBR4DFiB1+ChCmsPqS9qH68",
                "YOnoHOL41dqj+ut0JebDFHOqTwCFt5Oz6GGsKJXYsVoq3qNpvxFj9K7tijRgyxMDkWUsxmUay0x0NBUYYY9eQShWGWXBlw6KbiI7",
                "8PsNmfMGcDDLdc6Za/3vk6y4IQUlJe8uYrOlPhcc7DR8c+4l5bGnf0rLa7P+NFNj2MNwl7t0VeYmOaDyYnmkNifr2p7dHVUigEZ6",
                "aq8z2Pm+ioDousswHHyryzJ2fxjDWFEr/5UFqqR6WBpVAapybTnyDixUU3Lk3PsftaQiX8WVCG1MGhq2fUfVMDvgWMG6raSeUNuG",
                "zJGJqIxzt7ob6Aw/LDW99UByJof1IVzloNEotuQ4dZr3j2+z7mfy+1eBDYXKFFFOe9ILybnXQESAdrW4KK9nnRuHCGdqgRVERjux",
                "0aBonaoLza3omNlRFwioYmQ3O6j8QpoddB5hm45FWfd4qOVt2wjWT2I4uPHa3yTQzapiduNbw9PGcBjegPX6TdJ3wA=="
            ].joined()
        )!
    )

    @Test(.enabled(if: hasHEIF, "libheif.so.1 (Debian: libheif1) and libturbojpeg.so.0 are needed"), arguments: TestEngines.all)
    func aHEICPhotosThumbnailIsAJPEGOfItsPixels(engine: DatabaseEngine) async throws {
        try await ProfilePhotoTests.withMediaApp(engine, .local) { client, app in
            let account = try await client.signUp()
            let uploaded = try await ProfilePhotoTests.upload(client, Self.realHEIC, token: account.accessToken, contentType: "image/heic")
            #expect(uploaded.status == .ok, "\(String(buffer: uploaded.body))")
            let full = try await Self.link(client, of: account.id, size: "full", token: account.accessToken)
            #expect(full["contentType"] as? String == "image/heic" && full["width"] as? Int == 320 && full["height"] as? Int == 240)
            let small = try await Self.link(client, of: account.id, size: "thumbnail", token: account.accessToken)
            #expect(small["size"] as? String == "thumbnail" && small["contentType"] as? String == "image/jpeg")
            #expect(small["width"] as? Int == 256 && small["height"] as? Int == 192)

            let fetched = try await ProfilePhotoTests.fetch(client, try #require(small["url"] as? String))
            #expect(fetched.status == 200 && fetched.headers["content-type"] == "image/jpeg")
            #expect(!Self.hasSegment(fetched.bytes, marker: 0xE1))
            let pixels = try #require(try Self.decodeJPEG(fetched.bytes, atLeast: (256, 192)))
            #expect(pixels.width == 256 && pixels.height == 192)
            func at(_ x: Int, _ y: Int) -> [UInt8] { Array(pixels.bytes[((y * pixels.width + x) * 3)..<((y * pixels.width + x) * 3 + 3)]) }
            let left = at(40, 96), right = at(216, 96), top = at(128, 10), bottom = at(128, 182)
            #expect(left[2] < 60 && right[2] > 195, "blue: left \(left), right \(right)")
            #expect(right[0] > left[0] + 100, "red rises to the right: \(left[0]) → \(right[0])")
            #expect(bottom[1] > top[1] + 100, "green rises downwards: \(top[1]) → \(bottom[1])")
            let objects = try await ProfilePhotoTests.objects(of: account.id, in: app)
            #expect(objects.count == 2 && objects.contains { $0.hasSuffix("-thumb.jpg") })
        }
    }

    /// A JPEG a test fetched, decoded as the thumbnailer decodes one (its size read first, then checked).
    static func decodeJPEG(_ jpeg: [UInt8], atLeast target: (width: Int, height: Int)) throws -> Pixels? {
        let image = try ImageInspector(maxPixels: 8192).inspect(jpeg)
        return try? libraries.turboJPEG?.decode(
            jpeg, atLeast: target, expected: image.size, whole: image.decodedWhole, limits: DecodeLimits(maxSide: 8192, maxPixels: 1 << 26))
    }

    @Test func aHEICPastTheLimitsOrDamagedIsRefusedByItsDecoder() async throws {
        try #require(Self.hasHEIF)
        let heif = try #require(Self.libraries.heif)
        #expect(try heif.decode(Self.realHEIC, limits: DecodeLimits(maxSide: 320, maxPixels: 320 * 240)).width == 320)
        #expect(throws: DecodeFailure.tooLarge(PixelSize(width: 320, height: 240))) {
            try heif.decode(Self.realHEIC, limits: DecodeLimits(maxSide: 8192, maxPixels: 320 * 240 - 1))
        }
        // libheif's own limit refuses the image while it reads the file, before its size is asked.
        #expect(throws: DecodeFailure.undecodable) { try heif.decode(Self.realHEIC, limits: DecodeLimits(maxSide: 300, maxPixels: 1 << 24)) }
        #expect(throws: DecodeFailure.undecodable) { try heif.decode(Array(Self.realHEIC.prefix(600)), limits: DecodeLimits(maxSide: 8192, maxPixels: 1 << 24)) }
        #expect(throws: DecodeFailure.undecodable) { try heif.decode(Array(repeating: 0, count: 64), limits: DecodeLimits(maxSide: 8192, maxPixels: 1 << 24)) }
    }

    @Test(.enabled(if: hasPNG, "libpng16.so.16 is not installed"), arguments: TestEngines.all)
    func aPNGThumbnailKeepsItsTransparencyAndASmallPhotoIsItsOwnThumbnail(engine: DatabaseEngine) async throws {
        try await ProfilePhotoTests.withMediaApp(engine, .local) { client, _ in
            let account = try await client.signUp()
            #expect(try await ProfilePhotoTests.upload(client, try Self.realPNG(width: 800, height: 400), token: account.accessToken).status == .ok)
            let small = try await Self.link(client, of: account.id, size: "thumbnail", token: account.accessToken)
            #expect(small["size"] as? String == "thumbnail" && small["contentType"] as? String == "image/png")
            #expect(small["width"] as? Int == 256 && small["height"] as? Int == 128)
            let fetched = try await ProfilePhotoTests.fetch(client, try #require(small["url"] as? String))
            let pixels = try #require(try Self.libraries.png?.decode(fetched.bytes, limits: DecodeLimits(maxSide: 8192, maxPixels: 1 << 20)))
            #expect(pixels.width == 256 && pixels.height == 128)
            #expect(pixels.bytes[(10 * 256 + 10) * 4 + 1] == 255 && pixels.bytes[(10 * 256 + 10) * 4 + 3] == 255)
            #expect(pixels.bytes[(120 * 256 + 10) * 4 + 3] == 0)

            // 200×100 is small already: the photo is what a thumbnail link serves, and the answer says so.
            #expect(try await ProfilePhotoTests.upload(client, try Self.realPNG(width: 200, height: 100), token: account.accessToken).status == .ok)
            let same = try await Self.link(client, of: account.id, size: "thumbnail", token: account.accessToken)
            #expect(same["size"] as? String == "full" && same["width"] as? Int == 200)
        }
    }

    @Test func aHugeImageIsRefusedBeforeAnythingDecodesIt() async throws {
        try await ProfilePhotoTests.withMediaApp(.sqlite, .local) { client, app in
            let account = try await client.signUp()
            // A few hundred bytes claiming 60000×60000 pixels: refused by the size guard from the header alone.
            let bomb = TestImages.png(width: 60_000, height: 60_000)
            #expect(bomb.count < 1_000)
            let response = try await ProfilePhotoTests.upload(client, bomb, token: account.accessToken, contentType: "image/png")
            try expectProblem(response, .validationFailed)
            #expect(String(buffer: response.body).contains("photo"))
            #expect(try await ProfilePhotoTests.objects(of: account.id, in: app).isEmpty)
        }
        // And the thumbnailer itself will not decode a PNG over its pixel budget whole: libpng's reading of its size
        // is checked before the pixels are allocated.
        guard Self.hasPNG else { return }
        let inspected = InspectedImage(format: .png, width: 2_000, height: 1_000, bytes: try Self.realPNGIfAvailable(width: 2_000, height: 1_000))
        let thumbnailer = PhotoThumbnailer(libraries: Self.libraries, limits: DecodeLimits(maxSide: 8192, maxPixels: 1_000_000))
        #expect(throws: DecodeFailure.tooLarge(PixelSize(width: 2_000, height: 1_000))) { try thumbnailer.thumbnail(of: inspected) }
    }

    @Test func withoutTheLibrariesNoThumbnailIsMade() async throws {
        let none = PhotoThumbnailer(libraries: SystemImageLibraries(turboJPEG: nil, png: nil))
        let jpeg = InspectedImage(format: .jpeg, width: 1000, height: 600, bytes: TestImages.jpeg(width: 1000, height: 600))
        #expect(try none.thumbnail(of: jpeg) == nil)
        #expect(SystemImageLibraries(turboJPEG: nil, png: nil).missing.count == 3)
        let heic = InspectedImage(format: .heic, width: 1000, height: 600, bytes: Self.realHEIC)
        #expect(try none.thumbnail(of: heic) == nil)
        #expect(try PhotoThumbnailer(libraries: SystemImageLibraries(turboJPEG: Self.libraries.turboJPEG, png: nil)).thumbnail(of: heic) == nil)
    }

    @Test func areaAveragingMeansTheCoveredPixels() {
        // One row of four grey levels averaged to two: (0+100)/2 and (200+40)/2.
        let row = Pixels(width: 4, height: 1, channels: 1, bytes: [0, 100, 200, 40])
        #expect(AreaAverage.scale(row, to: (2, 1)).bytes == [50, 120])
        // Three to two: each output covers 1.5 source pixels.
        let three = Pixels(width: 3, height: 1, channels: 1, bytes: [30, 90, 150])
        #expect(AreaAverage.scale(three, to: (2, 1)).bytes == [50, 130])
        // Weights always sum to one.
        for spans in AreaAverage.weights(from: 1000, to: 256) {
            #expect(abs(spans.map(\.weight).reduce(0, +) - 1) < 0.0001)
        }
        let dimensions = PhotoSize.thumbnailDimensions(width: 1000, height: 600)
        #expect(dimensions?.width == 256 && dimensions?.height == 154)
        #expect(PhotoSize.thumbnailDimensions(width: 256, height: 100) == nil)
    }

    /// Whether `jpeg` has a segment with `marker` before its first scan.
    static func hasSegment(_ jpeg: [UInt8], marker: UInt8) -> Bool {
        var offset = 2
        while offset + 4 <= jpeg.count, jpeg[offset] == 0xFF, jpeg[offset + 1] != 0xDA {
            if jpeg[offset + 1] == marker { return true }
            offset += 2 + (Int(jpeg[offset + 2]) << 8 | Int(jpeg[offset + 3]))
        }
        return false
    }

    /// A real PNG when libpng is here, else a structurally valid one (the budget check needs no decoding).
    static func realPNGIfAvailable(width: Int, height: Int) throws -> [UInt8] {
        hasPNG ? try realPNG(width: width, height: height) : TestImages.png(width: width, height: height)
    }
}

/// Where a test JPEG's metadata segments end (its first DQT).
enum JPEGCleanerProbe {
    static func endOfMetadata(_ jpeg: [UInt8]) -> Int {
        var offset = 2
        while offset + 4 <= jpeg.count, jpeg[offset] == 0xFF, (0xE0...0xFE).contains(jpeg[offset + 1]) {
            offset += 2 + (Int(jpeg[offset + 2]) << 8 | Int(jpeg[offset + 3]))
        }
        return offset
    }
}

/// What start-up says about the media set-up.
@Suite struct MediaStartupWarningTests {
    @Test func localMediaOnPostgresAndMissingLibrariesAreReported() {
        let local = MediaConfiguration.Store.local(directory: nil)
        #expect(MediaFeature.startupWarnings(engine: .sqlite, store: local, missingLibraries: []).isEmpty)
        let perInstance = MediaFeature.startupWarnings(engine: .postgres, store: local, missingLibraries: [])
        #expect(perInstance.count == 1 && perInstance[0].contains("FITBASE_STORAGE_URL") && perInstance[0].contains("instance"))
        let s3 = MediaConfiguration.Store.s3(
            S3Location(parsing: "s3://bucket?region=us-east-1&endpoint=http://127.0.0.1:5055")!,
            AWSCredentials(accessKeyID: "a", secretAccessKey: "b"))
        #expect(MediaFeature.startupWarnings(engine: .postgres, store: s3, missingLibraries: []).isEmpty)
        let missing = MediaFeature.startupWarnings(engine: .sqlite, store: s3, missingLibraries: SystemImageLibraries(turboJPEG: nil, png: nil).missing)
        #expect(missing.count == 1 && missing[0].contains("libturbojpeg0"))
    }
}
