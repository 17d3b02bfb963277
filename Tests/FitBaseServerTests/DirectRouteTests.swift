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
        try await withApp(engine, demoCatalog: true) { direct, testDatabase in
            let generatedApp = try await buildApplication(
                configuration: .testing(testDatabase, demoCatalog: true), logger: TestDatabase.logger, mailer: nil, directRoutes: false
            )
            try await generatedApp.test(.router) { generated in
                let member = try await direct.signUp()
                let admin = try await direct.signUp()
                let database = try await Database.open(testDatabase.location, logger: TestDatabase.logger)
                try await UserStore(database: database).setRole(.admin, for: try #require(UserID(admin.id)))
                let workouts = try await CatalogStore(database: database).allWorkouts()
                try await database.shutdown()
                #expect(workouts.contains { $0.isPremium } && workouts.contains { !$0.isPremium })

                var paths = ["/healthz", "/v1/workouts/\(UUID())", "/v1/workouts/not-an-id", "/v1/workouts/\(workouts[0].id.description.uppercased())"]
                paths += workouts.map { "/v1/workouts/\($0.id)" }
                paths += Self.listings.map { "/v1/workouts?\($0)" }
                for token in [nil, member.accessToken, admin.accessToken] {
                    for path in paths {
                        try await Self.expectSame(path, token: token, direct: direct, generated: generated)
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
