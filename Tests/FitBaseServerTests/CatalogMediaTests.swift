import FitBaseCore
import FitBaseTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import SQLKit
import Testing

@testable import FitBaseServer

/// Workout thumbnails and videos over HTTP on every engine and media back end: admins upload them (videos streamed to
/// the store), anyone reads a thumbnail or a free workout's video, only entitled callers a premium workout's video.
@Suite struct CatalogMediaTests {
    /// A video-shaped file: an MP4 `ftyp` box, then `count` bytes of pattern.
    static func video(_ count: Int) -> [UInt8] {
        TestImages.box("ftyp", Array("isom".utf8) + TestImages.be32(512) + Array("isomiso2mp41".utf8)) + MediaStorageTests.pattern(count)
    }

    /// A free and a premium workout in the catalog, and an admin.
    static func setUp(_ client: any TestClientProtocol, _ app: TestApp) async throws -> (free: String, premium: String, admin: TestAccount) {
        let free = CatalogTests.fixture[0]
        let premium = CatalogTests.fixture[1]
        try #require(!free.isPremium && premium.isPremium)
        try await CatalogImporter.importCatalog(([free, premium], []), into: app.database, now: .storageNow)
        let admin = try await client.signUp()
        try await UserStore(database: app.database).setRole(.admin, for: try #require(UserID(admin.id)), now: .storageNow)
        return (free.id.description, premium.id.description, admin)
    }

    static func upload(
        _ client: any TestClientProtocol, _ workout: String, _ kind: String, _ bytes: [UInt8], token: String?, contentType: String = "video/mp4"
    ) async throws -> TestResponse {
        var headers: HTTPFields = [.contentType: contentType]
        if let token { headers[.authorization] = "Bearer \(token)" }
        return try await client.execute(uri: "/v1/admin/workouts/\(workout)/media/\(kind)", method: .put, headers: headers, body: ByteBuffer(bytes: bytes))
    }

    static func objects(in app: TestApp) async throws -> [StoredMedia] {
        try await MediaFeature.storage(for: app.foundation).list(prefix: "catalog/")
    }

    @Test(arguments: ProfilePhotoTests.setups)
    func uploadsAndLinksFollowTheEntitlement(engine: DatabaseEngine, backend: MediaBackend) async throws {
        try await ProfilePhotoTests.withMediaApp(engine, backend) { client, app in
            let (free, premium, admin) = try await Self.setUp(client, app)

            let thumbnail = try await Self.upload(client, free, "thumbnail", TestImages.jpeg(width: 400, height: 300), token: admin.accessToken, contentType: "image/jpeg")
            #expect(thumbnail.status == .ok)
            #expect(try json(thumbnail)["contentType"] as? String == "image/jpeg")
            let thumbnailLink = try json(try await client.json(.get, "/v1/workouts/\(free)/media/thumbnail"))
            let thumbnailBytes = try await ProfilePhotoTests.fetch(client, try #require(thumbnailLink["url"] as? String))
            #expect(thumbnailBytes.status == 200)
            #expect(!TestImages.contains(thumbnailBytes.bytes, TestImages.secret))

            // 12 MiB and a bit: a multipart upload on S3.
            let video = Self.video(12 << 20 + 777)
            let uploaded = try await Self.upload(client, premium, "video", video, token: admin.accessToken)
            #expect(uploaded.status == .ok)
            let stored = try json(uploaded)
            #expect(stored["bytes"] as? Int == video.count)
            #expect(stored["contentType"] as? String == "video/mp4")
            #expect(stored["version"] as? Int == 1)

            // The premium video: no link without an entitlement at this moment.
            #expect(try await client.json(.get, "/v1/workouts/\(premium)/media/video").status == .unauthorized)
            let member = try await client.signUp()
            try expectProblem(try await client.json(.get, "/v1/workouts/\(premium)/media/video", token: member.accessToken), .upgradeRequired)
            try await app.testDatabase.grant(.premium, toUser: member.id)
            let link = try json(try await client.json(.get, "/v1/workouts/\(premium)/media/video", token: member.accessToken))
            let url = try #require(link["url"] as? String)
            let seek = try await ProfilePhotoTests.fetch(client, url, range: "bytes=\(6 << 20)-\(6 << 20 + 99)")
            #expect(seek.status == 206)
            #expect(seek.bytes == Array(video[(6 << 20)..<(6 << 20 + 100)]))
            #expect(seek.headers["content-range"] == "bytes \(6 << 20)-\(6 << 20 + 99)/\(video.count)")
            #expect(try await client.json(.get, "/v1/workouts/\(premium)/media/video", token: admin.accessToken).status == .ok)

            // A free workout's video is anyone's; a second upload replaces the first (one object left).
            #expect(try await Self.upload(client, free, "video", Self.video(1000), token: admin.accessToken).status == .ok)
            let again = try json(try await Self.upload(client, free, "video", Self.video(2000), token: admin.accessToken))
            #expect(again["version"] as? Int == 2)
            let freeVideo = try json(try await client.json(.get, "/v1/workouts/\(free)/media/video"))
            #expect(try await ProfilePhotoTests.fetch(client, try #require(freeVideo["url"] as? String)).bytes == Self.video(2000))
            #expect(try await Self.objects(in: app).count == 3)
            try expectProblem(try await client.json(.get, "/v1/workouts/\(premium)/media/thumbnail"), .notFound)
        }
    }

    /// On a live connection a video in the data directory goes out through the kernel (sendfile): whole and in
    /// ranges, several on one kept-alive connection, byte for byte, and no descriptor of the file left open after.
    @Test(arguments: TestEngines.all)
    func aLiveConnectionSendsTheFileItselfByteForByte(engine: DatabaseEngine) async throws {
        try await ProfilePhotoTests.withMediaApp(engine, .local, options: .init(live: true)) { client, app in
            let (free, _, admin) = try await Self.setUp(client, app)
            let video = Self.video(3 << 20 + 12_345)
            #expect(try await Self.upload(client, free, "video", video, token: admin.accessToken).status == .ok)
            let url = try #require(try json(try await client.json(.get, "/v1/workouts/\(free)/media/video"))["url"] as? String)
            let link = url
            let stored = try await Self.objects(in: app)
            let root = try #require(MediaFeature.storage(for: app.foundation) as? LocalMediaStorage).root
            let file = root + "/" + (try #require(stored.first)).key.path
            for (range, expected) in [
                (nil, video[...]), ("bytes=0-99", video[0..<100]), ("bytes=\(1 << 20 - 3)-\(2 << 20 + 2)", video[(1 << 20 - 3)...(2 << 20 + 2)]),
                ("bytes=-10", video[(video.count - 10)...]), ("bytes=\(3 << 20)-", video[(3 << 20)...]),
            ] as [(String?, ArraySlice<UInt8>)] {
                let fetched = try await ProfilePhotoTests.fetch(client, link, range: range)
                #expect(fetched.status == (range == nil ? 200 : 206))
                #expect(fetched.headers["content-length"] == "\(expected.count)")
                #expect(fetched.bytes == Array(expected), "range \(range ?? "none")")
            }
            try await Task.sleep(for: .milliseconds(100))
            let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
            #expect(!descriptors.contains { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0)) == file })
        }
    }

    @Test(arguments: ProfilePhotoTests.setups)
    func aQuickTimeVideoIsServedAsQuickTimeAndDeletingTheWorkoutRemovesItsFiles(engine: DatabaseEngine, backend: MediaBackend) async throws {
        try await ProfilePhotoTests.withMediaApp(engine, backend) { client, app in
            let (free, premium, admin) = try await Self.setUp(client, app)
            let quickTime = TestImages.box("ftyp", Array("qt  ".utf8) + TestImages.be32(0) + Array("qt  ".utf8)) + MediaStorageTests.pattern(4000)
            let stored = try json(try await Self.upload(client, free, "video", quickTime, token: admin.accessToken, contentType: "video/quicktime"))
            #expect(stored["contentType"] as? String == "video/quicktime")
            #expect((stored["digest"] as? String)?.count == 64)
            let link = try json(try await client.json(.get, "/v1/workouts/\(free)/media/video"))
            #expect((link["media"] as? [String: Any])?["contentType"] as? String == "video/quicktime")
            let fetched = try await ProfilePhotoTests.fetch(client, try #require(link["url"] as? String))
            #expect(fetched.status == 200 && fetched.bytes == quickTime)
            #expect(fetched.headers["content-type"] == "video/quicktime")
            #expect(try await Self.objects(in: app).map(\.key.path).allSatisfy { $0.hasSuffix(".mov") })

            // The same file again has the same digest; another workout's files stay when this one is deleted.
            let again = try json(try await Self.upload(client, free, "video", quickTime, token: admin.accessToken, contentType: "video/quicktime"))
            #expect(again["digest"] as? String == stored["digest"] as? String)
            #expect(try await Self.upload(client, free, "thumbnail", TestImages.jpeg(), token: admin.accessToken, contentType: "image/jpeg").status == .ok)
            #expect(try await Self.upload(client, premium, "video", Self.video(3000), token: admin.accessToken).status == .ok)
            #expect(try await Self.objects(in: app).count == 3)
            #expect(try await client.json(.delete, "/v1/admin/workouts/\(free)", token: admin.accessToken).status == .noContent)
            // The files go through the outbox, once the deletion has committed.
            #expect(await eventually { try await Self.objects(in: app).count == 1 })
            let left = try await Self.objects(in: app).map(\.key.path)
            #expect(left.count == 1 && left.allSatisfy { $0.contains(premium.lowercased()) })
        }
    }

    /// A store that cannot be reached: every call fails.
    struct UnreachableStore: MediaStorage {
        struct Down: Error {}
        func put<Body: AsyncSequence & Sendable>(_ key: MediaKey, contentType: String, body: Body) async throws -> StoredMedia
        where Body.Element == ByteBuffer { throw Down() }
        func get(_ key: MediaKey, range: MediaByteRange?) async throws -> MediaContent? { throw Down() }
        func delete(_ key: MediaKey) async throws { throw Down() }
        func list(prefix: String) async throws -> [StoredMedia] { throw Down() }
        func presignedURL(for key: MediaKey, expires: Duration, now: Date) -> String? { nil }
        var kind: String { "unreachable" }
    }

    /// A deleted workout's files are queued for deletion in the deleting transaction: a store that is down when the
    /// outbox first tries leaves the job waiting, and a later attempt (on any instance) deletes them; a deletion that
    /// is refused (a program lists the workout) queues nothing.
    @Test(arguments: TestEngines.all)
    func aDeletedWorkoutsFilesAreDeletedOnceTheStoreIsBack(engine: DatabaseEngine) async throws {
        try await ProfilePhotoTests.withMediaApp(engine, .local) { client, app in
            let (free, premium, admin) = try await Self.setUp(client, app)
            #expect(try await Self.upload(client, free, "video", Self.video(3000), token: admin.accessToken).status == .ok)
            #expect(try await Self.upload(client, premium, "video", Self.video(3000), token: admin.accessToken).status == .ok)
            let queued = { (db: Database) in
                try await db.withConnection { db in
                    try await db.select().column("id").from("outbox").where("kind", .equal, "media-deletion").all().count
                }
            }
            // Refused: a program lists the premium workout; nothing is queued, its file stays.
            let program = CatalogProgram(
                id: ProgramID(), title: "Keeps it", description: "", level: .beginner, isPremium: false, weeks: [[try #require(WorkoutID(premium))]]
            )
            try await CatalogImporter.importCatalog(([], [program]), into: app.database, now: .storageNow)
            #expect(try await client.json(.delete, "/v1/admin/workouts/\(premium)", token: admin.accessToken).status == .conflict)
            #expect(try await queued(app.database) == 0)

            #expect(try await Self.objects(in: app).count == 2)
            _ = free
        }
        // The job as a deletion queues it, on a database no running server delivers from: a worker whose store is down
        // keeps it for later; one whose store answers, later, deletes the files.
        try await TestDatabase.with(engine, migrated: true) { testDatabase in
            try await testDatabase.withStorage { database in
                let root = FileManager.default.temporaryDirectory.appendingPathComponent("media-\(UUID())").path
                defer { try? FileManager.default.removeItem(atPath: root) }
                let storage = LocalMediaStorage(root: root)
                let workout = WorkoutID()
                for path in [WorkoutMediaUploads.prefix(of: workout) + "video-1.mp4", WorkoutMediaUploads.prefix(of: workout) + "thumbnail-1.jpg", "catalog/workouts/other/video-1.mp4"] {
                    _ = try await storage.put(try #require(MediaKey(path)), contentType: "video/mp4", body: WholeBody(ByteBuffer(bytes: Self.video(100))))
                }
                let outbox = Outbox(masterKey: try MasterKey.load(for: .testing(testDatabase)), signal: WakeSignal())
                try await database.transaction { db in
                    try await outbox.enqueue(.mediaDeletion(prefix: WorkoutMediaUploads.prefix(of: workout), of: workout), user: nil, now: .storageNow, on: db)
                }
                let worker = { (store: any MediaStorage) in
                    OutboxWorker(
                        database: database, outbox: outbox, mailer: LogMailer(logger: TestDatabase.logger), sender: "FitBase <no-reply@localhost>",
                        appleTokens: nil, logger: TestDatabase.logger, media: store
                    )
                }
                let job = {
                    try await database.withConnection { db in
                        try #require(try await db.select().columns("status", "attempts", "last_error").from("outbox").where("kind", .equal, "media-deletion").first())
                    }
                }
                #expect(try await worker(UnreachableStore()).deliverDueJobs(now: Date.storageNow.addingTimeInterval(1)) == 1)
                #expect(try await job().decode(column: "status", as: String.self) == "pending")
                #expect(try await job().decode(column: "last_error", as: String?.self) != nil)
                #expect(try await storage.list(prefix: "catalog/").count == 3)
                // Not due again yet (backed off); then, later, delivered, once.
                #expect(try await worker(storage).deliverDueJobs(now: Date.storageNow.addingTimeInterval(2)) == 0)
                #expect(try await worker(storage).deliverDueJobs(now: Date.storageNow.addingTimeInterval(5_000)) == 1)
                #expect(try await worker(storage).deliverDueJobs(now: Date.storageNow.addingTimeInterval(10_000)) == 0)
                #expect(try await job().decode(column: "status", as: String.self) == "sent")
                #expect(try await storage.list(prefix: "catalog/").map(\.key.path) == ["catalog/workouts/other/video-1.mp4"])

                // A workout deleted, then back in the catalog under its id (re-created, or seeded again) before its job
                // runs: the files under its prefix may be its new ones, and they stay.
                let back = CatalogTests.fixture[2]
                try await CatalogImporter.importCatalog(([back], []), into: database, now: .storageNow)
                let newVideo = try #require(MediaKey(WorkoutMediaUploads.prefix(of: back.id) + "video-2.mp4"))
                _ = try await storage.put(newVideo, contentType: "video/mp4", body: WholeBody(ByteBuffer(bytes: Self.video(100))))
                try await database.transaction { db in
                    try await outbox.enqueue(.mediaDeletion(prefix: WorkoutMediaUploads.prefix(of: back.id), of: back.id), user: nil, now: .storageNow, on: db)
                }
                #expect(try await worker(storage).deliverDueJobs(now: Date.storageNow.addingTimeInterval(10_001)) == 1)
                #expect(try await storage.list(prefix: WorkoutMediaUploads.prefix(of: back.id)).map(\.key) == [newVideo])
            }
        }
    }

    @Test(arguments: ProfilePhotoTests.setups)
    func badUploadsAreRefusedAndLeaveNothing(engine: DatabaseEngine, backend: MediaBackend) async throws {
        var options = TestAppOptions()
        options.configure = { $0.media.videoMaxBytes = 1 << 20 }
        try await ProfilePhotoTests.withMediaApp(engine, backend, options: options) { client, app in
            let (free, _, admin) = try await Self.setUp(client, app)
            let user = try await client.signUp()
            #expect(try await Self.upload(client, free, "video", Self.video(100), token: user.accessToken).status == .forbidden)
            #expect(try await Self.upload(client, free, "video", Self.video(100), token: nil).status == .unauthorized)
            let notVideo = try expectProblem(try await Self.upload(client, free, "video", Array(repeating: 7, count: 5000), token: admin.accessToken), .validationFailed)
            #expect((notVideo["errors"] as? [[String: String]])?.first?["field"] == "body")
            try expectProblem(try await Self.upload(client, free, "video", Self.video(1 << 20 + 1), token: admin.accessToken), .payloadTooLarge)
            try expectProblem(try await Self.upload(client, free, "thumbnail", Array("<svg/>".utf8), token: admin.accessToken, contentType: "image/png"), .validationFailed)
            try expectProblem(try await Self.upload(client, free, "poster", Self.video(100), token: admin.accessToken), .invalidRequest)
            try expectProblem(try await Self.upload(client, UUID().uuidString, "video", Self.video(100), token: admin.accessToken), .notFound)
            #expect(try await Self.objects(in: app).isEmpty)
            try expectProblem(try await client.json(.get, "/v1/workouts/\(free)/media/video"), .notFound)
        }
    }

    /// Without the direct route, the generated handler stores an upload alike (from the body the transport collected).
    @Test func theGeneratedHandlerUploadsAlike() async throws {
        var options = TestAppOptions()
        options.directRoutes = false
        try await ProfilePhotoTests.withMediaApp(.sqlite, .local, options: options) { client, app in
            let (free, _, admin) = try await Self.setUp(client, app)
            let video = Self.video(300_000)
            let stored = try json(try await Self.upload(client, free, "video", video, token: admin.accessToken))
            #expect(stored["bytes"] as? Int == video.count)
            #expect(try json(try await Self.upload(client, free, "thumbnail", TestImages.png(), token: admin.accessToken, contentType: "image/png"))["contentType"] as? String == "image/png")
            let link = try json(try await client.json(.get, "/v1/workouts/\(free)/media/video"))
            #expect(try await ProfilePhotoTests.fetch(client, try #require(link["url"] as? String)).bytes == video)
            try expectProblem(try await Self.upload(client, free, "video", Array(repeating: 1, count: 100), token: admin.accessToken), .validationFailed)
            #expect(try await Self.objects(in: app).count == 2)
        }
    }

    /// `fitbase seed`'s media folder: each workout's files stored as an admin's uploads are; a folder or file it does
    /// not know stops the import before anything is stored.
    @Test(arguments: ProfilePhotoTests.setups)
    func seedImportsAFolderOfMedia(engine: DatabaseEngine, backend: MediaBackend) async throws {
        try await ProfilePhotoTests.withMediaApp(engine, backend) { client, app in
            let (free, premium, admin) = try await Self.setUp(client, app)
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("fitbase-seed-media-\(UUID().uuidString)").path
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let manager = FileManager.default
            try manager.createDirectory(atPath: "\(folder)/\(free)", withIntermediateDirectories: true)
            try manager.createDirectory(atPath: "\(folder)/\(premium)", withIntermediateDirectories: true)
            try Data(TestImages.png()).write(to: URL(fileURLWithPath: "\(folder)/\(free)/thumbnail.png"))
            let video = Self.video(6 << 20)
            try Data(video).write(to: URL(fileURLWithPath: "\(folder)/\(premium)/video.mp4"))

            // Unknown names stop the import before anything is stored.
            try Data().write(to: URL(fileURLWithPath: "\(folder)/\(free)/poster.png"))
            await #expect(throws: CatalogMediaImportError.self) { _ = try await CatalogMediaImport(folder: folder, database: app.database) }
            try manager.removeItem(atPath: "\(folder)/\(free)/poster.png")
            try manager.createDirectory(atPath: "\(folder)/not-a-workout", withIntermediateDirectories: true)
            await #expect(throws: CatalogMediaImportError.self) { _ = try await CatalogMediaImport(folder: folder, database: app.database) }
            try manager.removeItem(atPath: "\(folder)/not-a-workout")
            #expect(try await Self.objects(in: app).isEmpty)

            let files = try await CatalogMediaImport(folder: folder, database: app.database)
            #expect(files.count == 2)
            try await files.write(configuration: app.configuration, database: app.database, logger: TestDatabase.logger, now: .storageNow) { _, _ in }
            let thumbnail = try json(try await client.json(.get, "/v1/workouts/\(free)/media/thumbnail"))
            #expect((thumbnail["media"] as? [String: Any])?["contentType"] as? String == "image/png")
            let link = try json(try await client.json(.get, "/v1/workouts/\(premium)/media/video", token: admin.accessToken))
            #expect(try await ProfilePhotoTests.fetch(client, try #require(link["url"] as? String)).bytes == video)
            #expect(try await Self.objects(in: app).count == 2)
        }
    }
}
