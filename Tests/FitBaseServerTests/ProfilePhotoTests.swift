import AsyncHTTPClient
import FitBaseCore
import FitBaseTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import NIOHTTP1
import Testing

@testable import FitBaseServer

/// Profile photos over HTTP on every engine and every media back end: upload, links, ranges, expiry and tampering,
/// who may see a photo, bad uploads, account deletion and export.
@Suite struct ProfilePhotoTests {
    /// Every engine × every media back end.
    static let setups: [(DatabaseEngine, MediaBackend)] = TestEngines.all.flatMap { engine in MediaBackend.all.map { (engine, $0) } }

    /// The application on `engine` with media on `backend` (an S3 bucket of the test's own).
    static func withMediaApp(
        _ engine: DatabaseEngine, _ backend: MediaBackend, options: TestAppOptions = .init(),
        _ test: @escaping @Sendable (any TestClientProtocol, TestApp) async throws -> Void
    ) async throws {
        let store = try await backend.configuration(client: .shared)
        var options = options
        let configure = options.configure
        options.configure = { configuration in
            configure(&configuration)
            configuration.media.store = store
        }
        try await withApp(engine, options: options, test)
    }

    static func upload(
        _ client: any TestClientProtocol, _ bytes: [UInt8], token: String?, contentType: String = "image/jpeg"
    ) async throws -> TestResponse {
        var headers: HTTPFields = [.contentType: contentType]
        if let token { headers[.authorization] = "Bearer \(token)" }
        return try await client.execute(uri: "/v1/me/photo", method: .put, headers: headers, body: ByteBuffer(bytes: bytes))
    }

    /// What a link answers: a FitBase link through the test client, a presigned URL from the bucket.
    static func fetch(
        _ client: any TestClientProtocol, _ url: String, range: String? = nil
    ) async throws -> (status: Int, headers: [String: String], bytes: [UInt8]) {
        if let path = url.range(of: "/v1/media/").map({ String(url[$0.lowerBound...]) }), !url.contains("X-Amz-Signature") {
            var headers: HTTPFields = [:]
            if let range { headers[.range] = range }
            let response = try await client.execute(uri: path, method: .get, headers: headers, body: nil)
            let fields = Dictionary(response.headers.map { ($0.name.canonicalName, $0.value) }, uniquingKeysWith: { first, _ in first })
            return (Int(response.status.code), fields, Array(response.body.readableBytesView))
        }
        var request = HTTPClientRequest(url: url)
        if let range { request.headers.add(name: "Range", value: range) }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let fields = Dictionary(response.headers.map { ($0.name.lowercased(), $0.value) }, uniquingKeysWith: { first, _ in first })
        return (Int(response.status.code), fields, Array(try await response.body.collect(upTo: 64 << 20).readableBytesView))
    }

    static func link(_ client: any TestClientProtocol, of user: String, token: String) async throws -> [String: Any] {
        let response = try await client.json(.get, "/v1/users/\(user)/photo", token: token)
        try #require(response.status == .ok, "photo link answered \(response.status): \(String(buffer: response.body))")
        return try json(response)
    }

    static func objects(of user: String, in app: TestApp) async throws -> [String] {
        try await MediaFeature.storage(for: app.foundation).list(prefix: "users/\(user.lowercased())/").map(\.key.path)
    }

    @Test(arguments: setups)
    func uploadReadRangesReplaceAndRemove(engine: DatabaseEngine, backend: MediaBackend) async throws {
        try await Self.withMediaApp(engine, backend) { client, app in
            let account = try await client.signUp()
            let original = TestImages.jpeg(width: 640, height: 480)
            let cleaned = try ImageInspector(maxPixels: 8192).inspect(original).bytes
            // Declared as PNG, recognised as JPEG from its bytes.
            let uploaded = try await Self.upload(client, original, token: account.accessToken, contentType: "image/png")
            #expect(uploaded.status == .ok)
            let photo = try json(uploaded)
            #expect(photo["contentType"] as? String == "image/jpeg")
            #expect(photo["width"] as? Int == 640)
            #expect(photo["height"] as? Int == 480)
            #expect(photo["version"] as? Int == 1)
            #expect(photo["bytes"] as? Int == cleaned.count)

            let link = try await Self.link(client, of: account.id, token: account.accessToken)
            let url = try #require(link["url"] as? String)
            let whole = try await Self.fetch(client, url)
            #expect(whole.status == 200)
            #expect(whole.bytes == cleaned)
            #expect(!TestImages.contains(whole.bytes, TestImages.secret))
            #expect(whole.headers["content-type"] == "image/jpeg")
            let part = try await Self.fetch(client, url, range: "bytes=10-19")
            #expect(part.status == 206)
            #expect(part.bytes == Array(cleaned[10...19]))
            #expect(part.headers["content-range"] == "bytes 10-19/\(cleaned.count)")
            let tail = try await Self.fetch(client, url, range: "bytes=-4")
            #expect(tail.bytes == Array(cleaned.suffix(4)))

            // A new photo is a new version and a new object; the old one is gone.
            let replaced = try json(try await Self.upload(client, TestImages.png(), token: account.accessToken))
            #expect(replaced["version"] as? Int == 2)
            #expect(replaced["contentType"] as? String == "image/png")
            let objects = try await Self.objects(of: account.id, in: app)
            #expect(objects.count == 1)
            #expect(objects.first?.hasSuffix(".png") == true)

            #expect(try await client.json(.delete, "/v1/me/photo", token: account.accessToken).status == .noContent)
            try expectProblem(try await client.json(.get, "/v1/users/\(account.id)/photo", token: account.accessToken), .notFound)
            #expect(try await Self.objects(of: account.id, in: app).isEmpty)
            #expect(try await client.json(.delete, "/v1/me/photo", token: account.accessToken).status == .noContent)
        }
    }

    @Test(arguments: TestEngines.all)
    func linksExpireAndCannotBeAltered(engine: DatabaseEngine) async throws {
        let clock = MovableClock()
        var options = TestAppOptions()
        options.clock = clock.serverClock
        try await Self.withMediaApp(engine, .local, options: options) { client, _ in
            let account = try await client.signUp()
            #expect(try await Self.upload(client, TestImages.jpeg(), token: account.accessToken).status == .ok)
            let link = try await Self.link(client, of: account.id, token: account.accessToken)
            let url = try #require(link["url"] as? String)
            let token = String(try #require(url.split(separator: "/").last))
            #expect(try await Self.fetch(client, url).status == 200)
            try expectProblem(
                try await client.execute(uri: "/v1/media/\(token)", method: .get, headers: [.range: "bytes=999999-"], body: nil),
                .rangeNotSatisfiable)

            let parts = token.split(separator: ".").map(String.init)
            let otherKey = Data("users/\(account.id.lowercased())/photo/1-00000000.jpg".utf8).base64EncodedString()
                .replacingOccurrences(of: "=", with: "").replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            let tampered = [
                [otherKey, parts[1], parts[2]],
                [parts[0], String(Int(parts[1])! + 86_400), parts[2]],
                [parts[0], parts[1], String(parts[2].reversed())],
                [parts[0], parts[1]],
            ]
            for altered in tampered {
                try expectProblem(try await client.execute(uri: "/v1/media/\(altered.joined(separator: "."))", method: .get, headers: [:], body: nil), .tokenInvalid)
            }
            // The link lasts an hour by default.
            let expiresAt = try #require((link["expiresAt"] as? String).flatMap(InternetDateTime.date(from:)))
            #expect(abs(expiresAt.timeIntervalSince(clock.serverClock.now) - 3600) < 5)
            clock.advance(by: 3601)
            try expectProblem(try await client.execute(uri: "/v1/media/\(token)", method: .get, headers: [:], body: nil), .tokenExpired)
            // A fresh link works again (asked for with a fresh session: the access token has expired too).
            let session = try await client.signIn(account)
            let fresh = try #require(try await Self.link(client, of: account.id, token: session.accessToken)["url"] as? String)
            #expect(try await Self.fetch(client, fresh).status == 200)
        }
    }

    @Test(arguments: TestEngines.all)
    func theOwnerAndTheGroupSeeThePhotoNobodyElse(engine: DatabaseEngine) async throws {
        try await Self.withMediaApp(engine, .local) { client, _ in
            let owner = try await client.signUp()
            let member = try await client.signUp()
            let stranger = try await client.signUp()
            #expect(try await Self.upload(client, TestImages.png(), token: owner.accessToken).status == .ok)
            // Before they share a group, the member-to-be sees nothing.
            try expectProblem(try await client.json(.get, "/v1/users/\(owner.id)/photo", token: member.accessToken), .notFound)
            let group = try json(try await client.json(.post, "/v1/groups", body: ["name": "Crew"], token: owner.accessToken))
            let groupID = try #require(group["id"] as? String)
            let invite = try json(try await client.json(.post, "/v1/groups/\(groupID)/invites", token: owner.accessToken))
            let inviteToken = try #require(invite["token"] as? String)
            #expect(try await client.json(.post, "/v1/invites/\(inviteToken)/accept", token: member.accessToken).status == .ok)

            let seen = try await Self.link(client, of: owner.id, token: member.accessToken)
            #expect(try await Self.fetch(client, try #require(seen["url"] as? String)).status == 200)
            try expectProblem(try await client.json(.get, "/v1/users/\(owner.id)/photo", token: stranger.accessToken), .notFound)
            #expect(try await client.json(.get, "/v1/users/\(owner.id)/photo", token: nil).status == .unauthorized)
            try expectProblem(try await client.json(.get, "/v1/users/not-a-user/photo", token: owner.accessToken), .notFound)
        }
    }

    @Test(arguments: setups)
    func badUploadsAreRefusedAndLeaveNothing(engine: DatabaseEngine, backend: MediaBackend) async throws {
        var options = TestAppOptions()
        options.configure = { $0.media.photoMaxBytes = 4096 }
        try await Self.withMediaApp(engine, backend, options: options) { client, app in
            let account = try await client.signUp()
            let cases: [([UInt8], String)] = [
                (Array("this is not an image".utf8), "is not a JPEG, PNG or HEIC image"),
                (Array(TestImages.jpeg().prefix(200)), "is cut off or damaged"),
                (TestImages.png(width: 100_000, height: 100_000), "is 100000×100000 pixels"),
            ]
            for (bytes, message) in cases {
                let problem = try expectProblem(try await Self.upload(client, bytes, token: account.accessToken), .validationFailed)
                let errors = try #require(problem["errors"] as? [[String: String]])
                #expect(errors.first?["field"] == "photo")
                #expect(errors.first?["message"]?.hasPrefix(message) == true, "\(errors)")
            }
            try expectProblem(try await Self.upload(client, TestImages.jpeg() + [UInt8](repeating: 0, count: 5000), token: account.accessToken), .payloadTooLarge)
            try expectProblem(try await Self.upload(client, TestImages.jpeg(), token: account.accessToken, contentType: "text/plain"), .unsupportedMediaType)
            #expect(try await Self.upload(client, TestImages.jpeg(), token: nil).status == .unauthorized)
            #expect(try await Self.objects(of: account.id, in: app).isEmpty)
            try expectProblem(try await client.json(.get, "/v1/users/\(account.id)/photo", token: account.accessToken), .notFound)
        }
    }

    @Test(arguments: setups)
    func deletingTheAccountRemovesEveryObject(engine: DatabaseEngine, backend: MediaBackend) async throws {
        try await Self.withMediaApp(engine, backend) { client, app in
            let account = try await client.signUp()
            let neighbour = try await client.signUp()
            #expect(try await Self.upload(client, TestImages.heic(), token: account.accessToken).status == .ok)
            #expect(try await Self.upload(client, TestImages.png(), token: neighbour.accessToken).status == .ok)
            // An object no row names (a replacement whose old object could not be deleted) goes too.
            let storage = MediaFeature.storage(for: app.foundation)
            let stray = try #require(MediaKey("users/\(account.id.lowercased())/photo/0-stray.jpg"))
            _ = try await storage.put(stray, contentType: "image/jpeg", body: WholeBody(ByteBuffer(string: "left over")))
            #expect(try await Self.objects(of: account.id, in: app).count == 2)

            #expect(try await client.json(.delete, "/v1/me", token: account.accessToken).status == .noContent)
            #expect(try await Self.objects(of: account.id, in: app).isEmpty)
            #expect(try await ProfilePhotoStore(database: app.database).photo(of: try #require(UserID(account.id))) == nil)
            #expect(try await Self.objects(of: neighbour.id, in: app).count == 1)
        }
    }

    @Test(arguments: setups)
    func theExportHoldsThePhoto(engine: DatabaseEngine, backend: MediaBackend) async throws {
        try await Self.withMediaApp(engine, backend) { client, _ in
            let account = try await client.signUp()
            let before = try json(try await client.json(.get, "/v1/me/export", token: account.accessToken))
            #expect((before["sections"] as? [String: Any])?["profilePhoto"] is NSNull)

            let original = TestImages.jpeg(width: 300, height: 300)
            #expect(try await Self.upload(client, original, token: account.accessToken).status == .ok)
            let export = try json(try await client.json(.get, "/v1/me/export", token: account.accessToken))
            let photo = try #require((export["sections"] as? [String: Any])?["profilePhoto"] as? [String: Any])
            let data = try #require((photo["data"] as? String).flatMap { Data(base64Encoded: $0) })
            #expect(Array(data) == (try ImageInspector(maxPixels: 8192).inspect(original).bytes))
            #expect(photo["contentType"] as? String == "image/jpeg")
            #expect(photo["width"] as? Int == 300)
            #expect(photo["bytes"] as? Int == data.count)
        }
    }

    /// Without the direct route, the generated handler answers a link with the whole object, a `Range` too (which
    /// HTTP allows): it would percent-encode a `Content-Range` header.
    @Test func theGeneratedHandlerServesLinksAlike() async throws {
        var options = TestAppOptions()
        options.directRoutes = false
        try await Self.withMediaApp(.sqlite, .local, options: options) { client, _ in
            let account = try await client.signUp()
            let original = TestImages.png()
            let cleaned = try ImageInspector(maxPixels: 8192).inspect(original).bytes
            #expect(try await Self.upload(client, original, token: account.accessToken).status == .ok)
            let url = try #require(try await Self.link(client, of: account.id, token: account.accessToken)["url"] as? String)
            let whole = try await Self.fetch(client, url)
            #expect(whole.status == 200)
            #expect(whole.bytes == cleaned)
            #expect(whole.headers["content-type"] == "image/png")
            let ranged = try await Self.fetch(client, url, range: "bytes=0-7")
            #expect(ranged.status == 200)
            #expect(ranged.bytes == cleaned)
            #expect(ranged.headers["content-range"] == nil)
        }
    }
}
