import FitBaseCore
import FitBaseTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing
import Yams

@testable import FitBaseServer

/// Every operation of openapi.yaml × every kind of caller → the status the access rules promise.
///
/// The equivalent of the Firestore rules emulator: a new operation fails this test until its row is added.
@Suite struct AccessMatrixTests {
    /// The kinds of caller each operation is tried with. `owner` owns the resource the request names (and is the admin
    /// of its group); `groupMember` is an ordinary member of the owner's group; `admin` has the platform's admin role.
    enum Caller: String, CaseIterable, Sendable {
        case anonymous, otherUser, groupMember, admin, owner
    }

    /// One operation's row: how to build the request for a caller, and what each caller gets.
    struct Row: Sendable {
        let operationID: String
        let expected: [Caller: HTTPResponse.Status]
        /// Extra headers computed from the exact body bytes sent (a webhook's signature).
        var signature: (@Sendable (Data) -> HTTPFields)? = nil
        /// Send the body as `application/x-www-form-urlencoded` (a page's form) instead of JSON.
        var formEncoded = false
        /// Send these bytes with this content type instead of a JSON body (a photo).
        var rawBody: (contentType: String, bytes: [UInt8])? = nil
        let request: @Sendable (Fixture, Caller) async throws -> (HTTPRequest.Method, String, [String: Any]?)
    }

    /// The accounts every row runs against: fresh per row, so rows cannot disturb each other.
    struct Fixture: Sendable {
        let client: any TestClientProtocol
        let owner: TestAccount
        let ownerSecondSession: String
        let otherUser: TestAccount
        let groupMember: TestAccount
        let admin: TestAccount
        /// A workout a program uses, one no program uses, and that program.
        let workoutID: String
        let unusedWorkoutID: String
        let programID: String
        /// A period and a workout the owner logged.
        let periodID: String
        /// A fertility signal (an LH test) the owner logged.
        let signalID: String
        let logID: String
        /// A training plan of the owner's.
        let planID: String
        /// A StoreKit transaction whose (lapsed) subscription the owner has claimed.
        let claimedTransaction: String
        /// A health sample of the owner's (who has given the healthData consent; nobody else has).
        let sampleID: String
        /// The owner's group (the owner is its admin, `groupMember` a member) and an invite to it made by the owner.
        let groupID: String
        let inviteToken: String
        let inviteID: String
        /// The owner's notification that `groupMember` joined.
        let notificationID: String

        func password(_ caller: Caller) -> String {
            switch caller {
            case .anonymous: "nobody's password"
            case .otherUser: otherUser.password
            case .groupMember: groupMember.password
            case .admin: admin.password
            case .owner: owner.password
            }
        }

        func token(_ caller: Caller) -> String? {
            switch caller {
            case .anonymous: nil
            case .otherUser: otherUser.accessToken
            case .groupMember: groupMember.accessToken
            case .admin: admin.accessToken
            case .owner: owner.accessToken
            }
        }
    }

    nonisolated(unsafe) static let workoutBody: [String: Any] = [  // never mutated
        "title": "Matrix Flow", "description": "A test workout.", "type": "yoga", "durationMinutes": 20, "intensity": "low",
        "phases": ["luteal"], "equipment": ["yogaMat"], "thumbnailURL": "https://cdn.example/m.jpg",
        "videoURL": "https://cdn.example/m.m3u8", "instructorName": "Ana Ruiz", "tags": ["flow"], "isFeatured": false,
        "isPremium": true, "targetAreas": ["core"], "benefits": ["Calm"],
    ]

    static func planBody(_ workout: String) -> [String: Any] {
        ["name": "Plan", "startDate": "2026-01-05", "daysPerWeek": 2, "weeklyWorkouts": [["week": 1, "days": [["day": 1, "workoutIds": [workout]]]]]]
    }

    static func everyone(_ status: HTTPResponse.Status) -> [Caller: HTTPResponse.Status] {
        Dictionary(uniqueKeysWithValues: Caller.allCases.map { ($0, status) })
    }

    static func adminOnly(_ status: HTTPResponse.Status) -> [Caller: HTTPResponse.Status] {
        [.anonymous: .unauthorized, .otherUser: .forbidden, .groupMember: .forbidden, .admin: status, .owner: .forbidden]
    }

    /// A resource of the owner's named by id: everyone else gets 404, as if it did not exist.
    static func ownerOnly(_ status: HTTPResponse.Status) -> [Caller: HTTPResponse.Status] {
        [.anonymous: .unauthorized, .otherUser: .notFound, .groupMember: .notFound, .admin: .notFound, .owner: status]
    }

    /// Only the owner has given the healthData consent.
    static func consented(_ status: HTTPResponse.Status) -> [Caller: HTTPResponse.Status] {
        [.anonymous: .unauthorized, .otherUser: .forbidden, .groupMember: .forbidden, .admin: .forbidden, .owner: status]
    }

    static func signedIn(_ status: HTTPResponse.Status) -> [Caller: HTTPResponse.Status] {
        [.anonymous: .unauthorized, .otherUser: status, .groupMember: status, .admin: status, .owner: status]
    }

    /// A resource of the owner's group: its members see it; nobody else learns it exists.
    static func groupOnly(member: HTTPResponse.Status, owner: HTTPResponse.Status) -> [Caller: HTTPResponse.Status] {
        [.anonymous: .unauthorized, .otherUser: .notFound, .groupMember: member, .admin: .notFound, .owner: owner]
    }

    @Test func everyOperationOfTheContractHasARow() throws {
        let specified = try Self.operationIDs()
        let covered = Set(Self.rows.map(\.operationID))
        #expect(specified.subtracting(covered).sorted() == [], "operations without an access-matrix row")
        #expect(covered.subtracting(specified).sorted() == [], "rows for operations the contract does not have")
        #expect(covered.count == Self.rows.count, "an operation has two rows")
    }

    @Test(arguments: TestEngines.all)
    func everyCallerGetsTheStatusTheRulesPromise(engine: DatabaseEngine) async throws {
        try await withProviderApp(engine, options: MetricsTests.options()) { client, _, app in
            let storage = app.database
            let users = UserStore(database: storage)
            for row in Self.rows {
                let used = CatalogTests.fixture[0]
                var unused = CatalogTests.fixture[1]
                unused.id = WorkoutID()
                let program = CatalogProgram(id: ProgramID(), title: "P", description: "", level: .beginner, isPremium: false, weeks: [[used.id]])
                try await CatalogImporter.importCatalog(([used, unused], [program]), into: storage, now: .storageNow)
                let owner = try await client.signUp()
                let second = try await client.signIn(owner)
                let admin = try await client.signUp()
                try await users.setRole(.admin, for: try #require(UserID(admin.id)), now: .storageNow)
                let logged = try await client.json(
                    .post, "/v1/cycle/periods", body: ["startDate": LocalCalendar.today(in: nil).adding(days: -10).description], token: owner.accessToken
                )
                let periodID = try #require(json(logged)["id"] as? String)
                let signal = try await client.json(
                    .post, "/v1/cycle/signals", body: ["date": LocalCalendar.today(in: nil).adding(days: -2).description, "type": "lhTest", "result": "negative"],
                    token: owner.accessToken
                )
                let signalID = try #require(json(signal)["id"] as? String)
                let workoutLog = try await client.json(
                    .post, "/v1/history", body: ["workoutId": used.id.description, "completedAt": "2026-01-04T10:00:00Z", "duration": 20],
                    token: owner.accessToken
                )
                let logID = try #require(json(workoutLog)["id"] as? String)
                let plan = try await client.json(.post, "/v1/plans", body: Self.planBody(used.id.description), token: owner.accessToken)
                let planID = try #require(json(plan)["id"] as? String)
                // Lapsed, so the owner stays on the free tier (the createPlan row relies on it).
                let purchase = try BillingFixture.signer.sign(AppStoreTestSigner.transaction(
                    originalTransactionId: "\(UInt64.random(in: 1_000_000...9_999_999))", expiresDate: Date.now.addingTimeInterval(-86_400)
                ))
                let claim = try await client.json(.post, "/v1/subscription/appstore/transactions", body: ["signedTransaction": purchase], token: owner.accessToken)
                try #require(claim.status == .ok, "claiming the fixture's transaction: \(String(buffer: claim.body))")
                try await HealthTests.consent(client, owner.accessToken)
                try await AnalyticsTests.consent(client, owner.accessToken)
                let sampleID = UUID().uuidString.lowercased()
                let sampled = try await HealthTests.upload(client, owner.accessToken, [HealthTests.sample("heartRate", id: UUID(uuidString: sampleID)!, start: "2026-11-20T07:00:00Z", ["value": 65])])
                try #require(sampled.status == .ok)
                let group = try json(try await client.json(.post, "/v1/groups", body: ["name": "Owner's Crew"], token: owner.accessToken))
                let groupID = try #require(group["id"] as? String)
                let invite = try json(try await client.json(.post, "/v1/groups/\(groupID)/invites", token: owner.accessToken))
                let inviteToken = try #require(invite["token"] as? String)
                let inviteID = try #require(invite["id"] as? String)
                let groupMember = try await client.signUp()
                try #require(try await client.json(.post, "/v1/invites/\(inviteToken)/accept", token: groupMember.accessToken).status == .ok)
                let notices = try json(try await client.json(.get, "/v1/notifications", token: owner.accessToken))["items"] as? [[String: Any]]
                let notificationID = try #require(notices?.first?["id"] as? String)
                let fixture = Fixture(
                    client: client, owner: owner, ownerSecondSession: try Self.sessionID(of: second),
                    otherUser: try await client.signUp(), groupMember: groupMember, admin: admin,
                    workoutID: used.id.description, unusedWorkoutID: unused.id.description, programID: program.id.description,
                    periodID: periodID, signalID: signalID, logID: logID, planID: planID, claimedTransaction: purchase, sampleID: sampleID,
                    groupID: groupID, inviteToken: inviteToken, inviteID: inviteID, notificationID: notificationID
                )
                // The owner goes last: its request may consume what the others' requests only probe.
                for caller in Caller.allCases {
                    let (method, path, body) = try await row.request(fixture, caller)
                    let response: TestResponse
                    if row.formEncoded, let body {
                        let form = body.map { "\($0.key)=\(String(describing: $0.value).addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")" }
                        response = try await client.execute(
                            uri: path, method: method, headers: [.contentType: "application/x-www-form-urlencoded"],
                            body: ByteBuffer(string: form.joined(separator: "&"))
                        )
                    } else if let raw = row.rawBody {
                        var headers: HTTPFields = [.contentType: raw.contentType]
                        if let token = fixture.token(caller) { headers[.authorization] = "Bearer \(token)" }
                        response = try await client.execute(uri: path, method: method, headers: headers, body: ByteBuffer(bytes: raw.bytes))
                    } else if let signature = row.signature, let body {
                        let bytes = try JSONSerialization.data(withJSONObject: body)
                        var headers = signature(bytes)
                        headers[.contentType] = "application/json"
                        if let token = fixture.token(caller) { headers[.authorization] = "Bearer \(token)" }
                        response = try await client.execute(uri: path, method: method, headers: headers, body: ByteBuffer(bytes: bytes))
                    } else {
                        response = try await client.json(method, path, body: body, token: fixture.token(caller))
                    }
                    #expect(
                        response.status == row.expected[caller],
                        "\(row.operationID) as \(caller.rawValue): \(response.status.code) \(String(buffer: response.body))"
                    )
                }
            }
        }
    }

    /// Every `operationId` in openapi.yaml.
    static func operationIDs() throws -> Set<String> {
        let text = try String(contentsOf: repositoryRoot.appendingPathComponent("Sources/FitBaseAPI/openapi.yaml"), encoding: .utf8)
        let document = try #require(try Yams.load(yaml: text) as? [String: Any])
        let paths = try #require(document["paths"] as? [String: Any])
        var ids: Set<String> = []
        for case let item as [String: Any] in paths.values {
            for case let operation as [String: Any] in item.values {
                if let id = operation["operationId"] as? String { ids.insert(id) }
            }
        }
        return ids
    }

    /// The session id inside an access token.
    static func sessionID(of account: TestAccount) throws -> String {
        let payload = try #require(account.accessToken.split(separator: ".").dropFirst().first)
        var base64 = payload.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        let data = try #require(Data(base64Encoded: base64))
        let claims = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        return try #require(claims["sid"] as? String)
    }
}
