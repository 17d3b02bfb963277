import FitBaseCore
import FitBaseTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

@testable import FitBaseServer

/// Operations answered without the generated server (`/healthz`, the catalog's workout and listing) send exactly what
/// the generated handlers send: the same requests, by the same callers, to an application with and one without the
/// direct routes on one database, get the same status, content type and bytes.
@Suite struct DirectRouteTests {
    /// Listings the direct route answers itself, and requests it leaves to the generated handler (text search,
    /// unknown or malformed values, percent-encoding, repeated single values).
    static let listings = [
        "", "limit=5", "limit=100", "sort=title", "sort=newest&limit=3", "sort=shortest", "sort=longest&limit=7",
        "type=strength", "type=strength&type=yoga&sort=longest", "equipment=dumbbells&sort=title", "equipment=none&equipment=mat",
        "intensity=high", "phase=luteal&featured=false", "premium=true", "premium=false&phase=menstrual", "featured=true",
        "minDuration=20&maxDuration=40&sort=shortest", "minDuration=30", "maxDuration=15", "targetArea=core&sort=newest",
        "unknown=1", "q=yoga", "q=flow%20yoga", "type=nope", "type=", "limit=0", "limit=101", "limit=abc", "cursor=garbage",
        "cursor=b2Zmc2V0OjI", "cursor=b2Zmc2V0OjI=", "minDuration=50&maxDuration=10", "sort=bogus", "featured=yes",
        "limit=20&limit=30", "intensity=high&intensity=low", "type=strength+yoga", "sort=title&",
    ]

    @Test(arguments: TestEngines.all)
    func directRoutesSendWhatTheGeneratedHandlersSend(engine: DatabaseEngine) async throws {
        try await withApp(engine, options: .init(demoCatalog: true)) { direct, app in
            try await withApp(on: app.testDatabase, options: .init(demoCatalog: true, directRoutes: false)) { generated, _ in
                let member = try await direct.signUp()
                let admin = try await direct.signUp()
                let database = app.database
                try await UserStore(database: database).setRole(.admin, for: try #require(UserID(admin.id)), now: .storageNow)
                let workouts = try await CatalogStore(database: database).allWorkouts()
                #expect(workouts.contains { $0.isPremium } && workouts.contains { !$0.isPremium })

                var paths = ["/healthz", "/v1/workouts/\(UUID())", "/v1/workouts/not-an-id", "/v1/workouts/\(workouts[0].id.description.uppercased())"]
                paths += workouts.map { "/v1/workouts/\($0.id)" }
                paths += Self.listings.map { "/v1/workouts?\($0)" }
                for token in [nil, member.accessToken, admin.accessToken] {
                    for path in paths {
                        try await Self.expectSame(path, token: token, direct: direct, generated: generated)
                    }
                    // A caller that takes no JSON: the generated handler's answer, from both.
                    for path in ["/healthz", "/v1/workouts/\(workouts[0].id)", "/v1/workouts?limit=3"] {
                        for accept in ["text/html", "application/json;q=0", "application/json, text/plain", "*/*"] {
                            var headers: HTTPFields = [.accept: accept]
                            if let token { headers[.authorization] = "Bearer \(token)" }
                            let fast = try await direct.execute(uri: path, method: .get, headers: headers)
                            let reference = try await generated.execute(uri: path, method: .get, headers: headers)
                            #expect(fast.status == reference.status, "\(path) \(accept)")
                            #expect(fast.headers[.contentType] == reference.headers[.contentType], "\(path) \(accept)")
                        }
                    }
                    // Every page of a listing, following its cursors.
                    var next: String? = "/v1/workouts?limit=4&sort=longest"
                    while let path = next {
                        let body = try await Self.expectSame(path, token: token, direct: direct, generated: generated)
                        next = try (JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any])?["nextCursor"]
                            .flatMap { $0 as? String }.map { "/v1/workouts?limit=4&sort=longest&cursor=\($0)" }
                    }
                }
            }
        }
    }

    /// The user's own history list is answered byte for byte as the generated handler answers it: every page of it,
    /// notes that need escaping, absent and present optional fields, logs sharing a time, and the requests the direct
    /// route leaves to the generated handler (bad, unknown, repeated or encoded parameters), by the owner, another user
    /// and an anonymous caller.
    @Test(arguments: TestEngines.all)
    func historyListsAreAnsweredAsTheGeneratedHandlerAnswersThem(engine: DatabaseEngine) async throws {
        try await withApp(engine, options: .init(demoCatalog: true)) { direct, app in
            try await withApp(on: app.testDatabase, options: .init(demoCatalog: true, directRoutes: false)) { generated, _ in
                let owner = try await direct.signUp()
                let other = try await direct.signUp()
                let workouts = try await CatalogStore(database: app.database).allWorkouts()
                let notes = ["plain", #"Leg "day" \ ✓ a/b"#, "line\nbreak\u{1}\t", "", "é"]
                for index in 0..<9 {
                    var body: [String: Any] = [
                        "workoutId": workouts[index % workouts.count].id.description, "duration": 20 + index,
                        // Three logs share each time: their order is the id's.
                        "completedAt": "2026-11-2\(index / 3)T07:30:00Z",
                    ]
                    if index % 2 == 0 { body["rating"] = 1 + index % 5 }
                    if index % 3 == 0 { body["energyBefore"] = 2; body["energyAfter"] = 4 }
                    if index < notes.count { body["notes"] = notes[index] }
                    #expect(try await direct.json(.post, "/v1/history", body: body, token: owner.accessToken).status == .created)
                }
                var paths = [
                    "/v1/history", "/v1/history?limit=100", "/v1/history?from=2026-11-21", "/v1/history?to=2026-11-21&limit=2",
                    "/v1/history?from=2026-11-21&to=2026-11-21", "/v1/history?limit=0", "/v1/history?limit=abc", "/v1/history?limit=101",
                    "/v1/history?cursor=garbage", "/v1/history?from=yesterday", "/v1/history?unknown=1", "/v1/history?limit=2&limit=3",
                    "/v1/history?from=2026%2D11%2D21", "/v1/history?limit=+2", "/v1/history?",
                ]
                // Every page of a listing, following its cursors.
                var next: String? = "/v1/history?limit=2"
                while let path = next {
                    paths.append(path)
                    let body = try await Self.expectSame(path, token: owner.accessToken, direct: direct, generated: generated)
                    next = try (JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any])?["nextCursor"]
                        .flatMap { $0 as? String }.map { "/v1/history?limit=2&cursor=\($0)" }
                }
                #expect(paths.count > 18)
                for token in [nil, owner.accessToken, other.accessToken] {
                    for path in paths {
                        try await Self.expectSame(path, token: token, direct: direct, generated: generated)
                    }
                }
            }
        }
    }

    /// Workouts logged through the direct route are answered as the generated handler answers them: the same bodies,
    /// valid and not (wrong types, unknown fields, nulls, escapes, rule violations, not JSON), from two users of one
    /// database and from an anonymous caller, get the same status, content type and JSON (the new log's id aside).
    @Test(arguments: TestEngines.all)
    func loggedWorkoutsAreAnsweredAsTheGeneratedHandlerAnswersThem(engine: DatabaseEngine) async throws {
        try await withApp(engine, options: .init(demoCatalog: true)) { direct, app in
            try await withApp(on: app.testDatabase, options: .init(demoCatalog: true, directRoutes: false)) { generated, _ in
                let first = try await direct.signUp()
                let second = try await direct.signUp()
                let workout = try await CatalogStore(database: app.database).allWorkouts()[3].id.description
                let bodies = [
                    #"{"workoutId":"\#(workout)","completedAt":"2026-11-20T07:30:00Z","duration":30}"#,
                    #"{"workoutId":"\#(workout)","completedAt":"2026-11-20T07:30:00.250Z","duration":45,"rating":4,"energyBefore":2,"energyAfter":5,"notes":"Leg \"day\" \\ ✓ a\/b\n\u0001"}"#,
                    #"{"workoutId":"\#(workout)","completedAt":"2026-11-20T09:30:00+02:00","duration":30,"rating":null,"notes":null}"#,
                    #"{"workoutId":"\#(workout)","completedAt":"2026-11-20T07:30:00Z","duration":30,"extra":1}"#,
                    #"{"workoutId":"\#(workout)","completedAt":"2026-11-20T07:30:00Z","duration":"30"}"#,
                    #"{"workoutId":"\#(workout)","completedAt":"2026-11-20T07:30:00Z","duration":3e1}"#,
                    #"{"workoutId":"\#(workout)","completedAt":"2026-11-20T07:30:00Z","duration":30.5}"#,
                    #"{"workoutId":"\#(workout)","completedAt":"yesterday","duration":30}"#,
                    #"{"workoutId":"\#(workout)","completedAt":"2026-11-20T07:30:00Z"}"#,
                    #"{"workoutId":"\#(workout)","completedAt":"2099-11-20T07:30:00Z","duration":30,"rating":9}"#,
                    #"{"workoutId":"\#(UUID())","completedAt":"2026-11-20T07:30:00Z","duration":30}"#,
                    #"{"workoutId":"not-an-id","completedAt":"2026-11-20T07:30:00Z","duration":0}"#,
                    #"{"workoutId":"\#(workout)","completedAt":"2026-11-20T07:30:00Z","duration":30,"notes":"\ud800"}"#,
                    #"{"workoutId":7}"#, "{}", "[]", "null", #"{"workoutId":"#,
                ]
                func normalized(_ response: TestResponse) throws -> NSObject? {
                    guard let object = try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView), options: .fragmentsAllowed) as? [String: Any]
                    else { return nil }
                    return object.filter { $0.key != "id" && $0.key != "requestId" } as NSDictionary
                }
                for (index, body) in bodies.enumerated() {
                    for (directToken, generatedToken) in [(first.accessToken, second.accessToken), (nil, nil)] as [(String?, String?)] {
                        func send(_ client: any TestClientProtocol, _ token: String?) async throws -> TestResponse {
                            var headers: HTTPFields = [.contentType: "application/json"]
                            if let token { headers[.authorization] = "Bearer \(token)" }
                            return try await client.execute(uri: "/v1/history", method: .post, headers: headers, body: ByteBuffer(string: body))
                        }
                        let fast = try await send(direct, directToken)
                        let reference = try await send(generated, generatedToken)
                        #expect(fast.status == reference.status, "body \(index)")
                        #expect(fast.headers[.contentType] == reference.headers[.contentType], "body \(index)")
                        #expect(try normalized(fast) == normalized(reference), "body \(index): \(String(buffer: fast.body)) vs \(String(buffer: reference.body))")
                    }
                }
                // Both users' histories hold the same logs, written the same way (the direct route's answers were
                // the stored logs: listing them gives the same bytes, ids aside).
                let mine = try json(try await direct.json(.get, "/v1/history?limit=100", token: first.accessToken))["items"] as? [[String: Any]] ?? []
                let theirs = try json(try await generated.json(.get, "/v1/history?limit=100", token: second.accessToken))["items"] as? [[String: Any]] ?? []
                #expect(mine.count >= 3 && mine.count == theirs.count)
                // Logs sharing a time are ordered by their ids, which differ: compared in an order of their own.
                func withoutIDs(_ logs: [[String: Any]]) -> [String] {
                    logs.map { $0.filter { $0.key != "id" }.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",") }.sorted()
                }
                #expect(withoutIDs(mine) == withoutIDs(theirs))
            }
        }
    }

    /// A sync push read by the direct route is answered as the generated handler answers it: two users of one database
    /// push the same mutations (their own record ids), one to each application, twice (the second time replays and
    /// conflicts); then bodies the direct route leaves to the generated handler go to both.
    @Test(arguments: TestEngines.all)
    func pushesAreAnsweredAsTheGeneratedHandlerAnswersThem(engine: DatabaseEngine) async throws {
        try await withApp(engine, options: .init(demoCatalog: true)) { direct, app in
            try await withApp(on: app.testDatabase, options: .init(demoCatalog: true, directRoutes: false)) { generated, _ in
                let listing = try await direct.json(.get, "/v1/workouts?limit=1")
                let workout = try #require(
                    ((try JSONSerialization.jsonObject(with: Data(listing.body.readableBytesView)) as? [String: Any])?["items"] as? [[String: Any]])?
                        .first?["id"] as? String
                )
                let first = try await direct.signUp()
                let second = try await direct.signUp()
                let firstIDs = (0..<4).map { _ in UUID().uuidString.lowercased() }
                let secondIDs = (0..<4).map { _ in UUID().uuidString.lowercased() }
                let today = LocalCalendar.today(in: nil)

                func batch(_ ids: [String], round: Int) -> [[String: Any]] {
                    let log: [String: Any] = ["workoutId": workout, "completedAt": "2026-11-20T07:30:00Z", "duration": 30.0, "rating": 4]
                    let plan: [String: Any] = [
                        "name": "Leg \"day\" ✓ a/b\n\u{1}", "startDate": "2026-11-02", "daysPerWeek": 3,
                        "weeklyWorkouts": [["week": 1, "days": [["day": 1, "workoutIds": [workout]]]]],
                    ]
                    func mutation(_ id: String, _ collection: String, _ record: String, op: String = "upsert", base: Int? = nil, data: [String: Any]? = nil) -> [String: Any] {
                        var mutation: [String: Any] = ["mutationId": "\(id)-\(round)", "collection": collection, "id": record, "op": op, "updatedAt": "2026-11-20T10:00:00Z"]
                        if let base { mutation["baseVersion"] = base }
                        if let data { mutation["data"] = data }
                        return mutation
                    }
                    var mutations = [
                        mutation("plan", "plans", ids[0], data: plan),
                        mutation("log", "workoutLogs", ids[1], data: log),
                        mutation("period", "cycleLogs", ids[2], data: ["startDate": today.adding(days: -10).description, "flow": "medium"]),
                        mutation("prefs", "preferences", "profile", data: ["fitnessLevel": "intermediate", "goals": ["buildStrength"]]),
                        mutation("nameless", "plans", ids[3], data: ["startDate": "2026-11-02", "daysPerWeek": 3, "weeklyWorkouts": []]),
                        mutation("typed", "workoutLogs", UUID(uuidString: ids[3])!.uuidString, data: ["workoutId": workout, "duration": "thirty"]),
                        ["mutationId": "", "collection": "workoutLogs", "id": ids[1], "op": "upsert", "updatedAt": "2026-11-20T10:00:00Z"],
                        mutation("plan", "plans", ids[0], data: plan),
                        mutation("gone", "workoutLogs", ids[1], op: "delete", base: 1),
                        mutation("health", "healthSamples", ids[3], data: ["type": "heartRate", "value": 61, "unit": "count/min"]),
                        mutation("notaplan", "plans", "not-an-id", data: plan),
                    ]
                    if round == 1 {
                        // An edit on an old version of the plan, after the first round's writes: a conflict.
                        mutations.append(mutation("stale", "plans", ids[0], base: 1, data: plan.merging(["name": "Renamed"]) { $1 }))
                        mutations.append(contentsOf: batch(ids, round: 0))  // every first-round mutation again: replays
                    }
                    return mutations
                }

                for round in 0..<2 {
                    let fast = try await direct.json(.post, "/v1/sync/push", body: ["mutations": batch(firstIDs, round: round)], token: first.accessToken)
                    let reference = try await generated.json(.post, "/v1/sync/push", body: ["mutations": batch(secondIDs, round: round)], token: second.accessToken)
                    try Self.expectSame(fast, reference, mapping: Dictionary(uniqueKeysWithValues: zip(secondIDs, firstIDs)), "round \(round)")
                }

                // Bodies the direct route does not take (or takes and the push refuses), sent as raw bytes.
                let bodies = [
                    #"{"mutations": ["#, #"{"mutations": 3}"#, #"[]"#, #"{}"#,
                    #"{"mutations":[{"mutationId":"x","collection":"nope","id":"ID","op":"upsert","updatedAt":"2026-11-20T10:00:00Z"}]}"#,
                    #"{"mutations":[{"mutationId":"x","collection":"plans","id":"ID","op":"upsert","updatedAt":"2026-11-20T10:00:00Z","data":[1]}]}"#,
                    #"{"mutations":[{"mutationId":"d1","mutationId":"d2","collection":"workoutLogs","id":"ID","op":"delete","updatedAt":"2026-11-20T10:00:00Z"}]}"#,
                    #"{"mutations":[{"mutationId":"e1","collection":"workoutLogs","id":"ID","op":"delete","updatedAt":"2026-11-20T10:00:00Z","extra":1}]}"#,
                    #"{"mutations":[{"mutationId":"y","collection":"workoutLogs","id":"ID","op":"delete","updatedAt":"yesterday"}]}"#,
                    #"{"mutations":[{"mutationId":"z","collection":"workoutLogs","id":"ID","op":"delete","baseVersion":1.5,"updatedAt":"2026-11-20T10:00:00Z"}]}"#,
                    #"{"mutations":[{"mutationId":"n","collection":"workoutLogs","id":"ID","op":"delete","baseVersion":null,"data":null,"updatedAt":"2026-11-20T10:00:00Z"}]}"#,
                    #"{"mutations":[{"mutationId":"s","collection":"workoutLogs","id":"ID","op":"upsert","updatedAt":"2026-11-20T10:00:00Z","data":{"workoutId":"\#(workout)","completedAt":"2026-11-20T07:30:00Z","duration":3e1,"notes":"\ud83c\udfcb\u00e9\/"}}]}"#,
                    #"{"mutations":[{"mutationId":"u","collection":"workoutLogs","id":"ID","op":"upsert","updatedAt":"2026-11-20T10:00:00Z","data":{"notes":"\ud800"}}]}"#,
                    "{\"mutations\":[" + Array(repeating: #"{"mutationId":"m","collection":"workoutLogs","id":"ID","op":"delete","updatedAt":"2026-11-20T10:00:00Z"}"#, count: 501).joined(separator: ",") + "]}",
                ]
                try await Self.expectSameAnswers(
                    to: bodies, at: "/v1/sync/push", everyHeaderCaseFor: bodies.count - 3, callers: [(nil, nil), (first.accessToken, second.accessToken)],
                    direct: direct, generated: generated
                )
            }
        }
    }

    /// A health upload read by the direct route is answered, and stored, as the generated handler answers and stores
    /// it: two consenting users upload the same samples (their own ids), one to each application, twice (the second
    /// time every sample is a duplicate); a third user uploads ids the first two hold; then bodies the direct route
    /// leaves to the generated handler go to both, and both users' stored samples are read back and compared.
    @Test(arguments: TestEngines.all)
    func healthUploadsAreAnsweredAsTheGeneratedHandlerAnswersThem(engine: DatabaseEngine) async throws {
        try await withApp(engine) { direct, app in
            try await withApp(on: app.testDatabase, options: .init(directRoutes: false)) { generated, _ in
                let first = try await direct.signUp()
                let second = try await direct.signUp()
                let third = try await direct.signUp()
                let withoutConsent = try await direct.signUp()
                for user in [first, second, third] {
                    let consent = try await direct.json(.post, "/v1/me/consents", body: ["kind": "healthData", "version": "1", "granted": true], token: user.accessToken)
                    #expect(consent.status == .created || consent.status == .ok)
                }
                let firstIDs = (0..<7).map { _ in UUID().uuidString.lowercased() }
                let secondIDs = (0..<7).map { _ in UUID().uuidString.lowercased() }

                func samples(_ ids: [String]) -> [[String: Any]] {
                    [
                        [
                            "id": ids[0], "type": "heartRate", "value": 61, "unit": "count/min", "start": "2026-11-20T07:30:00Z", "sourceId": "com.apple.health",
                            "device": "Apple Watch", "metadata": ["HKMetadataKeyHeartRateMotionContext": "1", "note": "a \"q\" \\ / ✓\n\u{1}"],
                        ],
                        ["id": ids[1], "type": "steps", "value": 1200.5, "unit": "count", "start": "2026-11-20T07:00:00Z", "end": "2026-11-20T07:10:00.250Z", "sourceId": "s"],
                        ["id": ids[2], "type": "heartRate", "value": 500, "unit": "count/min", "start": "2026-11-20T07:31:00Z", "sourceId": "s"],
                        ["id": ids[3], "type": "sleep", "stage": "asleepDeep", "start": "2026-11-19T23:00:00Z", "end": "2026-11-20T01:00:00Z", "sourceId": "s", "metadata": [:]],
                        ["id": ids[4], "type": "bloodPressure", "systolic": 120, "diastolic": 80.5, "unit": "mmHg", "start": "2026-11-20T08:05:00+01:00", "sourceId": "s"],
                        ["id": ids[0], "type": "heartRate", "value": 62, "unit": "bpm", "start": "2026-11-20T07:32:00Z", "sourceId": "s"],
                        ["id": "not-a-uuid", "type": "heartRate", "value": 62, "unit": "bpm", "start": "2026-11-20T07:32:00Z", "sourceId": "s"],
                        ["id": ids[5], "type": "oxygenSaturation", "value": 0.97, "unit": "%", "start": "2026-11-20T07:33:00Z", "sourceId": "s", "device": NSNull()],
                        ["id": ids[5], "type": "nope", "start": "2026-11-20T07:34:00Z", "sourceId": "s"],
                        ["id": ids[6].uppercased(), "type": "steps", "value": 10, "unit": "count", "start": "2026-11-20T07:35:00Z", "sourceId": "s"],
                    ]
                }
                // Ids are answered as sent when a sample is refused: upper-case ones map too.
                let mapping = Dictionary(uniqueKeysWithValues: Array(zip(secondIDs + secondIDs.map { $0.uppercased() }, firstIDs + firstIDs.map { $0.uppercased() })))
                for round in 0..<2 {
                    let fast = try await direct.json(.post, "/v1/health/samples", body: ["samples": samples(firstIDs)], token: first.accessToken)
                    let reference = try await generated.json(.post, "/v1/health/samples", body: ["samples": samples(secondIDs)], token: second.accessToken)
                    #expect(fast.status == .ok, "round \(round)")
                    try Self.expectSame(fast, reference, mapping: mapping, "round \(round)")
                }
                // Ids another user holds.
                let taken = try await direct.json(.post, "/v1/health/samples", body: ["samples": [samples(firstIDs)[0]]], token: third.accessToken)
                let takenReference = try await generated.json(.post, "/v1/health/samples", body: ["samples": [samples(secondIDs)[0]]], token: third.accessToken)
                try Self.expectSame(taken, takenReference, mapping: mapping, "taken")
                #expect(String(buffer: taken.body).contains("id_taken"))

                // What each user now holds, read back and opened.
                let stored = try await direct.json(.get, "/v1/health/samples?limit=50", token: first.accessToken)
                let storedReference = try await direct.json(.get, "/v1/health/samples?limit=50", token: second.accessToken)
                try Self.expectSame(stored, storedReference, mapping: mapping, "stored")
                #expect(String(buffer: stored.body).contains(#"a \"q\" \\ / ✓\n\u0001"#))

                // Bodies the direct route does not take (or takes and the upload refuses), sent as raw bytes.
                let sample = #"{"id":"ID","type":"heartRate","value":70,"unit":"bpm","start":"2026-11-20T07:40:00Z","sourceId":"s"}"#
                let bodies = [
                    #"{"samples": ["#, #"{"samples": 3}"#, #"[]"#, #"{}"#, #"{"samples": []}"#,
                    #"{"samples":[{"id":"ID","type":"heartRate","value":"70","unit":"bpm","start":"2026-11-20T07:40:00Z","sourceId":"s"}]}"#,
                    #"{"samples":[{"id":"ID","type":"heartRate","value":70,"unit":"bpm","start":"yesterday","sourceId":"s"}]}"#,
                    #"{"samples":[{"id":"ID","type":"heartRate","value":70,"unit":"bpm","start":"2026-11-20T07:40:00Z"}]}"#,
                    #"{"samples":[{"id":"ID","type":"heartRate","value":70,"unit":"bpm","start":"2026-11-20T07:40:00Z","sourceId":"s","extra":1}]}"#,
                    #"{"samples":[{"id":"ID","type":"heartRate","value":70,"value":71,"unit":"bpm","start":"2026-11-20T07:40:00Z","sourceId":"s"}]}"#,
                    #"{"samples":[{"id":"ID","type":"heartRate","value":7e1,"unit":null,"start":"2026-11-20T07:40:00Z","end":null,"sourceId":"s","metadata":null}]}"#,
                    #"{"samples":[{"id":"ID","type":"heartRate","value":70,"unit":"bpm","start":"2026-11-20T07:40:00Z","sourceId":"s","metadata":{"k":1}}]}"#,
                    #"{"samples":[{"id":"ID","type":"heartRate","value":70,"unit":"bpm","start":"2026-11-20T07:40:00Z","sourceId":"\ud83c\udfcb\/","metadata":{"k":"\ud800"}}]}"#,
                    "{\"samples\":[" + Array(repeating: sample, count: 1_001).joined(separator: ",") + "]}",
                    "{\"samples\":[" + sample + "]}",
                ]
                try await Self.expectSameAnswers(
                    to: bodies, at: "/v1/health/samples", everyHeaderCaseFor: bodies.count - 1,
                    callers: [(nil, nil), (first.accessToken, second.accessToken), (withoutConsent.accessToken, withoutConsent.accessToken)],
                    direct: direct, generated: generated
                )
            }
        }
    }

    /// Raw `bodies` (`ID` in them replaced by a new record id on each side) posted to `uri` on both applications get
    /// the same answers: by each caller (the token sent to the direct application and the one sent to the generated
    /// one for it), with a JSON content type, and for the body at `everyHeaderCaseFor` with every other label too.
    private static func expectSameAnswers(
        to bodies: [String], at uri: String, everyHeaderCaseFor special: Int, callers: [(direct: String?, generated: String?)],
        direct: any TestClientProtocol, generated: any TestClientProtocol
    ) async throws {
        let headerCases: [HTTPFields] = [[.contentType: "application/json"], [.contentType: "text/plain"], [.contentType: "application/json", .accept: "text/html"], [:]]
        for (index, body) in bodies.enumerated() {
            for (headerIndex, headers) in headerCases.enumerated() where index == special || headerIndex == 0 {
                for caller in callers {
                    let record = UUID().uuidString.lowercased()
                    let otherRecord = UUID().uuidString.lowercased()
                    func send(_ client: any TestClientProtocol, _ record: String, _ token: String?) async throws -> TestResponse {
                        var headers = headers
                        if let token { headers[.authorization] = "Bearer \(token)" }
                        return try await client.execute(uri: uri, method: .post, headers: headers, body: ByteBuffer(string: body.replacingOccurrences(of: "ID", with: record)))
                    }
                    let fast = try await send(direct, record, caller.direct)
                    let reference = try await send(generated, otherRecord, caller.generated)
                    try expectSame(fast, reference, mapping: [otherRecord: record], "body \(index), headers \(headerIndex)")
                }
            }
        }
    }

    /// Two answers agree: status, content type, and the body once the second user's record ids are replaced by the
    /// first's (and request ids and creation instants left out).
    private static func expectSame(_ fast: TestResponse, _ reference: TestResponse, mapping: [String: String], _ label: String) throws {
        #expect(fast.status == reference.status, "\(label)")
        #expect(fast.headers[.contentType] == reference.headers[.contentType], "\(label)")
        var text = String(buffer: reference.body)
        for (from, to) in mapping { text = text.replacingOccurrences(of: from, with: to) }
        func normalized(_ text: String) throws -> NSObject {
            func strip(_ value: Any) -> Any {
                if let object = value as? [String: Any] {
                    return object.filter { $0.key != "requestId" && $0.key != "createdAt" }.mapValues(strip) as NSDictionary
                }
                if let array = value as? [Any] { return array.map(strip) as NSArray }
                return value
            }
            return strip(try JSONSerialization.jsonObject(with: Data(text.utf8))) as! NSObject
        }
        #expect(try normalized(String(buffer: fast.body)) == normalized(text), "\(label): \(String(buffer: fast.body).prefix(600)) vs \(text.prefix(600))")
    }

    /// Requests `path` from both applications and expects the same answer; returns the body.
    @discardableResult
    private static func expectSame(
        _ path: String, token: String?, direct: any TestClientProtocol, generated: any TestClientProtocol
    ) async throws -> ByteBuffer {
        let fast = try await direct.json(.get, path, token: token)
        let reference = try await generated.json(.get, path, token: token)
        #expect(fast.status == reference.status, "\(path)")
        #expect(fast.headers[.contentType] == reference.headers[.contentType], "\(path)")
        if reference.status == .ok {
            #expect(String(buffer: fast.body) == String(buffer: reference.body), "\(path)")
        } else {
            // Problems name the request they answer; everything else in them must agree.
            #expect(try Self.withoutRequestID(fast.body) == Self.withoutRequestID(reference.body), "\(path)")
        }
        return fast.body
    }

    private static func withoutRequestID(_ body: ByteBuffer) throws -> NSDictionary {
        var object = try #require(JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any])
        object["requestId"] = nil
        return object as NSDictionary
    }
}
