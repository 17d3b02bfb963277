import FitBaseCore
import FitBaseTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import SQLKit
import Testing

@testable import FitBaseServer

/// Browsing, filtering, searching and managing the catalog, on every engine.
@Suite struct CatalogTests {
    static func workout(
        _ title: String, type: WorkoutType, minutes: Int, intensity: Intensity, phases: [CyclePhase], equipment: [Equipment],
        instructor: String = "Ana Ruiz", tags: [String] = [], featured: Bool = false, premium: Bool = false, areas: [TargetArea] = [.fullBody]
    ) -> CatalogWorkout {
        let id = WorkoutID()
        return CatalogWorkout(
            id: id, title: title, description: "\(title) session.", type: type, durationMinutes: minutes, intensity: intensity,
            phases: phases, equipment: equipment, thumbnailURL: "https://cdn.example/\(id).jpg", videoURL: "https://cdn.example/\(id).m3u8",
            instructorName: instructor, tags: tags, isFeatured: featured, isPremium: premium, targetAreas: areas, benefits: ["Feels good"]
        )
    }

    static let fixture: [CatalogWorkout] = [
        workout("Restorative Yoga Flow", type: .yoga, minutes: 30, intensity: .low, phases: [.menstrual, .luteal], equipment: [.yogaMat], tags: ["mobility"], featured: true),
        workout("Kettlebell Power Hour", type: .hiitStrength, minutes: 45, intensity: .high, phases: [.ovulatory], equipment: [.kettlebell], instructor: "Maya Chen", premium: true, areas: [.fullBody, .glutes]),
        workout("Dumbbell Glute Builder", type: .strength, minutes: 40, intensity: .medium, phases: [.follicular, .ovulatory], equipment: [.dumbbells], tags: ["glutes"], premium: true, areas: [.glutes, .lowerBody]),
        workout("Walking Pilates Basics", type: .walkingPilates, minutes: 20, intensity: .low, phases: [.menstrual, .follicular], equipment: [.none], instructor: "Maya Chen", featured: true, areas: [.core]),
        workout("Barre Burn", type: .barre, minutes: 25, intensity: .medium, phases: [.luteal], equipment: [.barreOrChair, .dumbbells], areas: [.lowerBody]),
        workout("Evening Meditation", type: .meditation, minutes: 10, intensity: .low, phases: [.luteal, .menstrual], equipment: [.none], tags: ["breathwork", "sleep"]),
    ]

    @Test(arguments: TestEngines.all)
    func filtersAndSearchCombine(engine: DatabaseEngine) async throws {
        try await withCatalog(engine) { client in
            let everything = try await workoutTitles(client, "sort=title")
            #expect(everything.count == 6)
            #expect(try await workoutTitles(client, "type=yoga&type=meditation&sort=title") == ["Evening Meditation", "Restorative Yoga Flow"])
            #expect(try await workoutTitles(client, "intensity=high") == ["Kettlebell Power Hour"])
            #expect(try await workoutTitles(client, "phase=menstrual&sort=title") == ["Evening Meditation", "Restorative Yoga Flow", "Walking Pilates Basics"])
            // Only dumbbells at home: what needs nothing or dumbbells alone.
            #expect(try await workoutTitles(client, "equipment=dumbbells&sort=title") == ["Dumbbell Glute Builder", "Evening Meditation", "Walking Pilates Basics"])
            #expect(try await workoutTitles(client, "equipment=none&sort=title") == ["Evening Meditation", "Walking Pilates Basics"])
            #expect(try await workoutTitles(client, "minDuration=25&maxDuration=40&sort=shortest") == ["Barre Burn", "Restorative Yoga Flow", "Dumbbell Glute Builder"])
            #expect(try await workoutTitles(client, "targetArea=glutes&sort=title") == ["Dumbbell Glute Builder", "Kettlebell Power Hour"])
            #expect(try await workoutTitles(client, "featured=true&sort=title") == ["Restorative Yoga Flow", "Walking Pilates Basics"])
            #expect(try await workoutTitles(client, "premium=false&phase=luteal&sort=title") == ["Barre Burn", "Evening Meditation", "Restorative Yoga Flow"])
            // Full text: title words, prefixes, tags, instructor, several words at once.
            #expect(try await workoutTitles(client, "q=yog") == ["Restorative Yoga Flow"])
            #expect(try await workoutTitles(client, "q=breathwork") == ["Evening Meditation"])
            #expect(try await workoutTitles(client, "q=maya%20chen&sort=title") == ["Kettlebell Power Hour", "Walking Pilates Basics"])
            #expect(try await workoutTitles(client, "q=glute%20dumbbell") == ["Dumbbell Glute Builder"])
            #expect(try await workoutTitles(client, "q=%22%29%20OR%20*") == [])
            #expect(try await workoutTitles(client, "q=glute&intensity=low") == [])
            #expect(try await workoutTitles(client, "sort=featured").prefix(2).sorted() == ["Restorative Yoga Flow", "Walking Pilates Basics"])

            let extreme = try expectProblem(try await client.json(.get, "/v1/workouts?intensity=extreme"), .invalidRequest)
            #expect((extreme["errors"] as? [[String: Any]])?.first?["field"] as? String == "intensity")
            #expect(try await client.json(.get, "/v1/workouts?minDuration=50&maxDuration=10").status == .badRequest)
            #expect(try await client.json(.get, "/v1/workouts?limit=101").status == .badRequest)
        }
    }

    @Test(arguments: TestEngines.all)
    func pagesWalkTheWholeListOnce(engine: DatabaseEngine) async throws {
        try await withCatalog(engine) { client in
            var seen: [String] = []
            var cursor: String? = nil
            repeat {
                let page = try json(try await client.json(.get, "/v1/workouts?limit=4&sort=newest" + (cursor.map { "&cursor=\($0)" } ?? "")))
                seen += try #require(page["items"] as? [[String: Any]]).compactMap { $0["id"] as? String }
                cursor = page["nextCursor"] as? String
            } while cursor != nil
            #expect(seen.count == 6)
            #expect(Set(seen).count == 6)
            #expect(try await client.json(.get, "/v1/workouts?cursor=nonsense").status == .badRequest)
        }
    }

    @Test(arguments: TestEngines.all)
    func premiumVideosAreForEntitledCallersOnly(engine: DatabaseEngine) async throws {
        try await withCatalogApp(engine) { client, app in
            let premium = try #require(Self.fixture.first { $0.isPremium })
            let anonymous = try json(try await client.json(.get, "/v1/workouts/\(premium.id)"))
            #expect(anonymous["videoURL"] == nil)
            #expect(anonymous["videoLocked"] as? Bool == true)
            let user = try await client.signUp()
            #expect(try json(try await client.json(.get, "/v1/workouts/\(premium.id)", token: user.accessToken))["videoURL"] == nil)
            let admin = try await makeAdmin(client, app)
            let entitled = try json(try await client.json(.get, "/v1/workouts/\(premium.id)", token: admin.accessToken))
            #expect(entitled["videoURL"] as? String == premium.videoURL)
            let free = try #require(Self.fixture.first { !$0.isPremium })
            #expect(try json(try await client.json(.get, "/v1/workouts/\(free.id)"))["videoURL"] as? String == free.videoURL)
            #expect(try await client.json(.get, "/v1/workouts/\(UUID())").status == .notFound)
        }
    }

    @Test(arguments: TestEngines.all)
    func cachedAnswersRevalidateWithTheirEntityTag(engine: DatabaseEngine) async throws {
        try await withCatalogApp(engine) { client, app in
            func get(_ uri: String, token: String? = nil, ifNoneMatch: String? = nil) async throws -> TestResponse {
                var headers: HTTPFields = [:]
                if let token { headers[.authorization] = "Bearer \(token)" }
                if let ifNoneMatch { headers[.ifNoneMatch] = ifNoneMatch }
                return try await client.execute(uri: uri, method: .get, headers: headers, body: nil)
            }
            let list = try await get("/v1/workouts?sort=title")
            #expect(list.status == .ok)
            let tag = try #require(list.headers[.eTag])
            #expect(tag.hasPrefix("\"") && tag.hasSuffix("\"") && tag.count == 24)
            #expect(list.headers[.cacheControl] == "private, no-cache")
            #expect(list.headers[.vary] == "Authorization")

            // The same answer: 304, no body, the same tag; in a list, weak, or `*` alike.
            for ifNoneMatch in [tag, "\"other\", \(tag)", "W/\(tag)", "*"] {
                let again = try await get("/v1/workouts?sort=title", ifNoneMatch: ifNoneMatch)
                #expect(again.status == .notModified, "\(ifNoneMatch)")
                #expect(again.body.readableBytes == 0)
                #expect(again.headers[.eTag] == tag)
            }
            #expect(try await get("/v1/workouts?sort=title", ifNoneMatch: "\"stale\"").status == .ok)
            // Another question, another tag.
            #expect(try await get("/v1/workouts?type=yoga").headers[.eTag] != tag)

            // The tag follows the caller: a premium workout's video is in the entitled answer only.
            let premium = try #require(Self.fixture.first { $0.isPremium })
            let anonymous = try await get("/v1/workouts/\(premium.id)")
            let admin = try await makeAdmin(client, app)
            let entitled = try await get("/v1/workouts/\(premium.id)", token: admin.accessToken, ifNoneMatch: anonymous.headers[.eTag])
            #expect(entitled.status == .ok)
            #expect(try json(entitled)["videoURL"] as? String == premium.videoURL)

            // An edit changes the answer, so the tag held before no longer matches.
            let free = try #require(Self.fixture.first { !$0.isPremium })
            let before = try #require(try await get("/v1/workouts/\(free.id)").headers[.eTag])
            #expect(try await get("/v1/workouts/\(free.id)", ifNoneMatch: before).status == .notModified)
            var body = try json(try await get("/v1/workouts/\(free.id)", token: admin.accessToken))
            body["title"] = "\(free.title) (new)"
            for key in ["id", "videoLocked", "createdAt", "updatedAt"] { body[key] = nil }
            #expect(try await client.json(.put, "/v1/admin/workouts/\(free.id)", body: body, token: admin.accessToken).status == .ok)
            let after = try await get("/v1/workouts/\(free.id)", ifNoneMatch: before)
            #expect(after.status == .ok)
            #expect(after.headers[.eTag] != before)

            // Entitlements are tagged per caller; a route outside the list is not tagged; an error is never tagged.
            let user = try await client.signUp()
            let features = try await get("/v1/features", token: user.accessToken)
            let featuresTag = try #require(features.headers[.eTag])
            #expect(try await get("/v1/features", token: user.accessToken, ifNoneMatch: featuresTag).status == .notModified)
            #expect(try await get("/v1/me", token: user.accessToken).headers[.eTag] == nil)
            let missing = try await get("/v1/workouts/\(UUID())")
            #expect(missing.status == .notFound)
            #expect(missing.headers[.eTag] == nil)
        }
    }

    @Test(arguments: TestEngines.all)
    func administratorsManageTheCatalog(engine: DatabaseEngine) async throws {
        try await withCatalogApp(engine) { client, app in
            let admin = try await makeAdmin(client, app)
            var body: [String: Any] = [
                "title": "Core Ignite", "description": "Ten minutes of core.", "type": "pilates", "durationMinutes": 10,
                "intensity": "medium", "phases": ["follicular"], "equipment": ["yogaMat"], "thumbnailURL": "https://cdn.example/c.jpg",
                "videoURL": "https://cdn.example/c.m3u8", "instructorName": "Ana Ruiz", "tags": ["core"], "isFeatured": false,
                "isPremium": false, "targetAreas": ["core"], "benefits": ["Stability"],
            ]
            let created = try await client.json(.post, "/v1/admin/workouts", body: body, token: admin.accessToken)
            #expect(created.status == .created)
            let id = try #require(json(created)["id"] as? String)
            #expect(try await workoutTitles(client, "q=ignite") == ["Core Ignite"])

            body["title"] = "Core Ignite Plus"
            body["durationMinutes"] = 15
            #expect(try await client.json(.put, "/v1/admin/workouts/\(id)", body: body, token: admin.accessToken).status == .ok)
            #expect(try await workoutTitles(client, "q=ignite") == ["Core Ignite Plus"])
            #expect(try json(try await client.json(.get, "/v1/workouts/\(id)"))["durationMinutes"] as? Int == 15)

            var bad = body
            bad["durationMinutes"] = 0
            bad["phases"] = [String]()
            bad["videoURL"] = "ftp://x"
            let refused = try await client.json(.post, "/v1/admin/workouts", body: bad, token: admin.accessToken)
            #expect(refused.status == .badRequest)
            let fields = try #require(json(refused)["errors"] as? [[String: String]]).compactMap { $0["field"] }
            #expect(Set(fields) == ["durationMinutes", "phases", "videoURL"])

            #expect(try await client.json(.delete, "/v1/admin/workouts/\(id)", token: admin.accessToken).status == .noContent)
            #expect(try await client.json(.get, "/v1/workouts/\(id)").status == .notFound)
            #expect(try await workoutTitles(client, "q=ignite") == [])
            #expect(try await client.json(.delete, "/v1/admin/workouts/\(id)", token: admin.accessToken).status == .notFound)

            let user = try await client.signUp()
            try expectProblem(try await client.json(.post, "/v1/admin/workouts", body: body, token: user.accessToken), .forbidden)
        }
    }

    @Test(arguments: TestEngines.all)
    func programsListTheirWorkoutsWeekByWeek(engine: DatabaseEngine) async throws {
        try await withCatalogApp(engine) { client, app in
            let programs = try json(try await client.json(.get, "/v1/programs"))
            let program = try #require((programs["items"] as? [[String: Any]])?.first)
            let id = try #require(program["id"] as? String)
            let detail = try json(try await client.json(.get, "/v1/programs/\(id)"))
            let weeks = try #require(detail["weeks"] as? [[String: Any]])
            #expect(weeks.map { $0["week"] as? Int } == [1, 2])
            #expect((weeks[1]["workoutIds"] as? [String]) == [Self.fixture[2].id.description, Self.fixture[0].id.description])
            #expect(try await client.json(.get, "/v1/programs/\(UUID())").status == .notFound)

            // A workout a program uses cannot be deleted out from under it.
            let admin = try await makeAdmin(client, app)
            let inUse = try await client.json(.delete, "/v1/admin/workouts/\(Self.fixture[2].id)", token: admin.accessToken)
            try expectProblem(inUse, .workoutInUse)
        }
    }

    @Test(arguments: TestEngines.all)
    func theDemoCatalogLoadsOnFirstStartAndImportsIdempotently(engine: DatabaseEngine) async throws {
        try await withApp(engine, options: .init(demoCatalog: true)) { client, app in
            var total = 0
            var types = Set<String>()
            var phases = Set<String>()
            var cursor: String? = nil
            repeat {
                let page = try json(try await client.json(.get, "/v1/workouts?limit=100" + (cursor.map { "&cursor=\($0)" } ?? "")))
                let items = try #require(page["items"] as? [[String: Any]])
                total += items.count
                items.forEach { types.insert($0["type"] as? String ?? ""); ($0["phases"] as? [String] ?? []).forEach { phases.insert($0) } }
                cursor = page["nextCursor"] as? String
            } while cursor != nil
            #expect(total >= 60)
            #expect(types == Set(WorkoutType.allCases.map(\.rawValue)))
            #expect(phases == Set(CyclePhase.allCases.map(\.rawValue)))
            #expect(try #require(json(try await client.json(.get, "/v1/programs"))["items"] as? [[String: Any]]).count >= 3)

            // Importing the same file again changes nothing.
            let database = app.database
            let url = try #require(Bundle.fitBaseServerResources.url(forResource: "demo-catalog", withExtension: "json"))
            try await CatalogImporter.importCatalog(try CatalogImporter.parse(Data(contentsOf: url)), into: database, now: .storageNow)
            let count = try await database.withConnection { db in
                try await db.raw("SELECT COUNT(*) AS n FROM workouts").first()?.decode(column: "n", as: Int.self)
            }
            #expect(count == total)
        }
    }

    @Test func importProblemsNameTheRecordAndField() throws {
        let file = #"""
            {"workouts": [
              {"id": "not-a-uuid", "title": "Broken", "description": "", "type": "zumba", "durationMinutes": 0, "intensity": "extreme",
               "phases": [], "equipment": ["none", "dumbbells"], "thumbnailURL": "x", "videoURL": "https://v.example/1",
               "instructorName": "A", "tags": [], "isFeatured": false, "isPremium": false, "targetAreas": ["core"], "benefits": []}
            ], "programs": []}
            """#
        do {
            _ = try CatalogImporter.parse(Data(file.utf8))
            Issue.record("a broken catalog must be refused")
        } catch let error as CatalogImporter.InvalidRecord {
            let text = error.description
            for expected in ["workouts[0] \"Broken\": id", "type: \"zumba\"", "intensity: \"extreme\"", "durationMinutes", "phases: must not be empty", "equipment: \"none\"", "thumbnailURL"] {
                #expect(text.contains(expected), "\(expected) missing from: \(text)")
            }
        }
        #expect(throws: CatalogImporter.InvalidRecord.self) { try CatalogImporter.parse(Data(#"{"workouts": [{"title": 3}]}"#.utf8)) }
    }

    // MARK: Helpers

    private func makeAdmin(_ client: any TestClientProtocol, _ app: TestApp) async throws -> TestAccount {
        let admin = try await client.signUp()
        try await UserStore(database: app.database).setRole(.admin, for: try #require(UserID(admin.id)), now: .storageNow)
        return admin
    }

    private func withCatalog(_ engine: DatabaseEngine, _ test: @escaping @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        try await withCatalogApp(engine) { client, _ in try await test(client) }
    }

    /// The app with the six fixture workouts and one two-week program.
    private func withCatalogApp(_ engine: DatabaseEngine, _ test: @escaping @Sendable (any TestClientProtocol, TestApp) async throws -> Void) async throws {
        try await withApp(engine) { client, app in
            let program = CatalogProgram(
                id: ProgramID(), title: "Two Week Start", description: "Begin gently.", level: .beginner, isPremium: false,
                weeks: [[Self.fixture[3].id, Self.fixture[0].id], [Self.fixture[2].id, Self.fixture[0].id]]
            )
            try await CatalogImporter.importCatalog((Self.fixture, [program]), into: app.database, now: .storageNow)
            try await test(client, app)
        }
    }
}

/// The titles `GET /v1/workouts?query` lists.
private func workoutTitles(_ client: any TestClientProtocol, _ query: String) async throws -> [String] {
    let response = try await client.json(.get, "/v1/workouts?\(query)")
    try #require(response.status == .ok, "\(query): \(String(buffer: response.body))")
    return try #require(json(response)["items"] as? [[String: Any]]).compactMap { $0["title"] as? String }
}
