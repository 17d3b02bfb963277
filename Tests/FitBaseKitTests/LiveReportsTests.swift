import FitBaseAPI
import FitBaseClient
import FitBaseCore
import FitBaseKit
import FitBaseTestSupport
import Foundation
import SQLKit
import Testing

@testable import FitBaseServer

/// The Kit's reports against a real server: leaderboard fetches timed and their failures reported, batches kept while
/// offline and sent once back, and nothing the rules refuse ever queued.
@Suite struct LiveReportsTests {
    @Test func everyKitErrorKindIsACodeTheServerTakes() {
        #expect(Set(KitError.Kind.allCases.map(\.rawValue)) == AppReportRules.kitErrorKinds)
    }

    @Test func leaderboardFetchesAreTimedAndAnOfflineOneReportedThenSentOnceBackOnline() async throws {
        try await LiveDevice.withServer { server, database in
            let device = try LiveDevice(server: server)
            defer { device.remove() }
            try await device.signUp()
            let reporter = try #require(device.dependencies.reports as? FitBaseReporter)
            let group = try await device.dependencies.groups.createGroup(name: "Morning Movers", timeZone: "UTC")
            _ = try await device.dependencies.groups.leaderboards(groupID: group.id, week: nil)
            device.network.offline = true
            await #expect(throws: KitError.self) { try await device.dependencies.groups.leaderboards(groupID: group.id, week: nil) }
            #expect(reporter.pending.contains { $0.kind == .trace && $0.operation == "leaderboard.fetch" && ($0.durationMilliseconds ?? -1) >= 0 })
            #expect(reporter.pending.contains { $0.kind == .error && $0.code == "offline" && $0.location == "leaderboard.fetch" })
            #expect(reporter.pending.allSatisfy { $0.appVersion == reporter.app.appVersion && $0.deviceModel == reporter.app.deviceModel })

            // Offline the batch stays; a report the rules refuse is never queued.
            await reporter.flush()
            let waiting = reporter.pending.count
            #expect(waiting >= 2)
            reporter.record(.error(code: "Ana's sync failed", location: "sync", at: Date(), appVersion: "1.0.0", platform: .ios, deviceModel: "arm64"))
            #expect(reporter.pending.count == waiting)

            device.network.offline = false
            await reporter.flush()
            #expect(reporter.pending.isEmpty)
            #expect(device.network.statuses("sendAppReports").last == 200)
            let opened = try await Database.open(database.location, logger: TestDatabase.logger)
            let stored = try await opened.withConnection { db in
                try await db.select().columns("kind", "code", "location", "operation").from("app_reports").all().map { row in
                    [try row.decode(column: "kind", as: String.self), try row.decode(column: "code", as: String?.self) ?? "", try row.decode(column: "location", as: String?.self) ?? "", try row.decode(column: "operation", as: String?.self) ?? ""]
                }
            }
            try await opened.shutdown()
            #expect(stored.count >= waiting)
            #expect(stored.contains(["error", "offline", "leaderboard.fetch", ""]))
            #expect(stored.contains { $0[0] == "trace" && $0[3] == "leaderboard.fetch" })
        }
    }
}
