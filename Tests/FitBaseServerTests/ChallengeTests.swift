import FitBaseCore
import FitBaseTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import SQLKit
import Testing

@testable import FitBaseServer

/// Weekly challenges: scoring from workout logs (REST and sync), ranks, privacy, reversal, concurrency, time zones.
@Suite struct ChallengeTests {
    /// A group of `count` members (the first is its admin), each named, with the catalog's fixture workout.
    static func group(_ client: any TestClientProtocol, _ testDatabase: TestDatabase, members count: Int, timeZone: String = "UTC") async throws -> (id: String, members: [TestAccount], workout: String) {
        let database = try await Database.open(testDatabase.location, logger: TestDatabase.logger)
        do {
            let group = try await group(client, database, members: count, timeZone: timeZone)
            try await database.shutdown()
            return group
        } catch {
            try? await database.shutdown()
            throw error
        }
    }

    /// ``group(_:_:members:timeZone:)-(_,TestDatabase,_,_)`` on a database handle the caller holds.
    static func group(_ client: any TestClientProtocol, _ database: Database, members count: Int, timeZone: String = "UTC") async throws -> (id: String, members: [TestAccount], workout: String) {
        try await CatalogImporter.importCatalog(([CatalogTests.fixture[0]], []), into: database, now: .storageNow)
        var members: [TestAccount] = []
        for index in 0..<count {
            let account = try await client.signUp()
            let named = try await client.json(
                .patch, "/v1/me", body: ["displayName": "Member \(index)", "timeZone": timeZone, "photoURL": "https://cdn.example/m\(index).jpg"],
                token: account.accessToken
            )
            try #require(named.status == .ok, "\(String(buffer: named.body))")
            members.append(account)
        }
        let groupID = try #require(try json(try await client.json(.post, "/v1/groups", body: ["name": "Crew", "timeZone": timeZone], token: members[0].accessToken))["id"] as? String)
        let token = try #require(try json(try await client.json(.post, "/v1/groups/\(groupID)/invites", token: members[0].accessToken))["token"] as? String)
        for member in members.dropFirst() {
            try #require(try await client.json(.post, "/v1/invites/\(token)/accept", token: member.accessToken).status == .ok)
        }
        return (groupID, members, CatalogTests.fixture[0].id.description)
    }

    @discardableResult
    static func log(_ client: any TestClientProtocol, _ account: TestAccount, _ workout: String, at date: Date = Date.now.addingTimeInterval(-60)) async throws -> String {
        var response = try await client.json(.post, "/v1/history", body: ["workoutId": workout, "completedAt": date.formatted(.iso8601), "duration": 30], token: account.accessToken)
        // A database too busy to lend a connection in time answers 503 with Retry-After (a loaded CI machine may get
        // there with hundreds of writes queued on one group): the client sends the workout again, as an app would.
        while response.status == .serviceUnavailable, response.headers[.retryAfter] != nil {
            try await Task.sleep(for: .seconds(1))
            response = try await client.json(.post, "/v1/history", body: ["workoutId": workout, "completedAt": date.formatted(.iso8601), "duration": 30], token: account.accessToken)
        }
        try #require(response.status == .created, "\(String(buffer: response.body))")
        return try #require(try json(response)["id"] as? String)
    }

    static func board(_ client: any TestClientProtocol, _ account: TestAccount, _ groupID: String, _ type: String = "checkIns") async throws -> [String: Any] {
        try json(try await client.json(.get, "/v1/groups/\(groupID)/leaderboards/\(type)", token: account.accessToken))
    }

    static func standings(_ board: [String: Any]) -> [String: (value: Int, rank: Int)] {
        Dictionary(uniqueKeysWithValues: ((board["entries"] as? [[String: Any]]) ?? []).map {
            (($0["userId"] as? String) ?? "", (($0["value"] as? Int) ?? -1, ($0["rank"] as? Int) ?? -1))
        })
    }

    @Test(arguments: TestEngines.all)
    func workoutsScoreOnceRankWithTiesAndCanBeTakenBack(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, app in
            let (groupID, m, workout) = try await Self.group(client, app.testDatabase, members: 4)
            try await Self.log(client, m[0], workout)
            var board = try await Self.board(client, m[1], groupID)
            #expect(Self.standings(board)[m[0].id]! == (1, 1))
            #expect((board["entries"] as? [[String: Any]])?.first?["displayName"] as? String == "Member 0")
            #expect((board["entries"] as? [[String: Any]])?.first?["photoURL"] as? String == "https://cdn.example/m0.jpg")
            let members = try json(try await client.json(.get, "/v1/groups/\(groupID)/members", token: m[1].accessToken))["items"] as? [[String: Any]]
            #expect(members?.first?["photoURL"] as? String == "https://cdn.example/m0.jpg")
            let badPhoto = try await client.json(.patch, "/v1/me", body: ["photoURL": "http://insecure.example/p.jpg"], token: m[0].accessToken)
            #expect(badPhoto.status == .badRequest)
            #expect(board["currentUserEntry"] == nil)

            // Member 1 logs twice and passes member 0, who is told.
            try await Self.log(client, m[1], workout)
            let second = try await Self.log(client, m[1], workout)
            board = try await Self.board(client, m[0], groupID)
            #expect(Self.standings(board)[m[1].id]! == (2, 1) && Self.standings(board)[m[0].id]! == (1, 2))
            #expect((board["currentUserEntry"] as? [String: Any])?["rank"] as? Int == 2)
            let notices = try json(try await client.json(.get, "/v1/notifications", token: m[0].accessToken))
            #expect((notices["items"] as? [[String: Any]])?.contains { $0["type"] as? String == "rank_change" } == true)
            #expect((notices["unreadCount"] as? Int ?? 0) >= 1)

            // Ties share a rank: values 2, 1, 1, 1 → ranks 1, 2, 2, 2; then 2, 2, 1, 1 → 1, 1, 3, 3.
            try await Self.log(client, m[2], workout)
            try await Self.log(client, m[3], workout)
            #expect(Self.standings(try await Self.board(client, m[0], groupID)).values.map(\.rank).sorted() == [1, 2, 2, 2])
            try await Self.log(client, m[2], workout)
            #expect(Self.standings(try await Self.board(client, m[0], groupID)).values.map(\.rank).sorted() == [1, 1, 3, 3])

            // The same log sent again through sync counts once; deleting it takes it back.
            let resend: [String: Any] = ["mutations": [[
                "mutationId": "again-\(second)", "collection": "workoutLogs", "id": second, "op": "upsert", "baseVersion": 1,
                "updatedAt": Date.now.formatted(.iso8601), "data": ["workoutId": workout, "completedAt": Date.now.addingTimeInterval(-30).formatted(.iso8601), "duration": 45],
            ]]]
            _ = try await client.json(.post, "/v1/sync/push", body: resend, token: m[1].accessToken)
            #expect(Self.standings(try await Self.board(client, m[0], groupID))[m[1].id]?.value == 2)
            #expect(try await client.json(.delete, "/v1/history/\(second)", token: m[1].accessToken).status == .noContent)
            #expect(Self.standings(try await Self.board(client, m[0], groupID))[m[1].id]?.value == 1)

            // Sharing off: nothing more counts; leaving takes the member off the board.
            _ = try await client.json(.patch, "/v1/me", body: ["privacy": ["shareWorkoutData": false]], token: m[3].accessToken)
            try await Self.log(client, m[3], workout)
            #expect(Self.standings(try await Self.board(client, m[0], groupID))[m[3].id]?.value == 1)
            #expect(try await client.json(.post, "/v1/groups/\(groupID)/leave", token: m[3].accessToken).status == .noContent)
            #expect(Self.standings(try await Self.board(client, m[0], groupID))[m[3].id] == nil)

            let challenges = try #require(try json(try await client.json(.get, "/v1/groups/\(groupID)/challenges/current", token: m[0].accessToken))["items"] as? [[String: Any]])
            #expect(Set(challenges.compactMap { $0["type"] as? String }) == ["checkIns", "streak"])
            #expect(challenges.allSatisfy { $0["isActive"] as? Bool == true })
        }
    }

    @Test(arguments: TestEngines.all)
    func twoHundredConcurrentWorkoutsOfTenMembersLoseNothing(engine: DatabaseEngine) async throws {
        try await withApp(engine, options: .init(exclusive: true)) { client, app in
            let (groupID, members, workout) = try await Self.group(client, app.testDatabase, members: 10)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, member) in members.enumerated() {
                    for _ in 0..<(11 + index * 2) {  // 11, 13, … 29 workouts: 200 in all, logged at once
                        group.addTask { try await Self.log(client, member, workout) }
                    }
                }
                try await group.waitForAll()
            }
            let standings = Self.standings(try await Self.board(client, members[0], groupID))
            for (index, member) in members.enumerated() {
                #expect(standings[member.id]?.value == 11 + index * 2)
                #expect(standings[member.id]?.rank == 10 - index)
            }
        }
    }

    @Test(arguments: TestEngines.all)
    func streaksCountLocalDaysInHalfHourZones(engine: DatabaseEngine) async throws {
        for zone in ["Asia/Kolkata", "Asia/Kathmandu"] {
            try await withApp(engine) { client, app in
                let timeZone = try #require(TimeZone(identifier: zone))
                let (groupID, members, workout) = try await Self.group(client, app.testDatabase, members: 2, timeZone: zone)
                // Last week (all of it past): 00:10 local on Monday, Tuesday and Wednesday — in UTC, the evening before.
                let week = ChallengeWeek.containing(.now, in: timeZone).previous(in: timeZone)
                for day in week.days.prefix(3) {
                    var calendar = Calendar(identifier: .gregorian)
                    calendar.timeZone = timeZone
                    let parts = day.description.split(separator: "-").compactMap { Int($0) }
                    let at = try #require(calendar.date(from: DateComponents(year: parts[0], month: parts[1], day: parts[2], hour: 0, minute: 10)))
                    try await Self.log(client, members[1], workout, at: at)
                }
                try await Self.log(client, members[0], workout, at: week.days[5].midday(in: timeZone))
                let database = app.database
                let boards = try await database.transaction { db in
                    let streak = try await ChallengeScoring.ensureChallenge(group: GroupID(groupID)!, kind: .streak, week: week, now: .now, on: db)
                    let checkIns = try await ChallengeScoring.ensureChallenge(group: GroupID(groupID)!, kind: .checkIns, week: week, now: .now, on: db)
                    return (try await ChallengeScoring.entries(of: streak.id, on: db), try await ChallengeScoring.entries(of: checkIns.id, on: db))
                }
                #expect(boards.0.map(\.value) == [3, 1], "\(zone)")
                #expect(boards.0.map(\.rank) == [1, 2])
                #expect(boards.1.first { $0.user.description == members[1].id }?.value == 3)
            }
        }
    }
}

extension CalendarDay {
    /// Noon of the day in `timeZone`.
    fileprivate func midday(in timeZone: TimeZone) -> Date {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = description.split(separator: "-").compactMap { Int($0) }
        return calendar.date(from: DateComponents(year: parts[0], month: parts[1], day: parts[2], hour: 12)) ?? .now
    }
}

/// The week rollover with a fake clock.
@Suite struct WeekRolloverTests {
    @Test(arguments: TestEngines.all)
    func aFinishedWeekClosesOnceWithFinalStandingsForEveryMember(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, app in
            let (groupID, members, workout) = try await ChallengeTests.group(client, app.testDatabase, members: 3)
            try await ChallengeTests.log(client, members[1], workout)
            try await ChallengeTests.log(client, members[1], workout)
            try await ChallengeTests.log(client, members[2], workout)
            let database = app.database
            let rollover = WeekRollover(database: database)
            let week = ChallengeWeek.containing(.now, in: TimeZone(identifier: "UTC")!)
            #expect(try await rollover.rollOver(at: week.end.addingTimeInterval(-1)) == 0)  // not over yet

            // Two instances at once, just after the week ends: the week closes once.
            let closedByEach = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<2 { group.addTask { try await rollover.rollOver(at: week.end.addingTimeInterval(1)) } }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(closedByEach.reduce(0, +) == 2)  // both challenges of the week, each closed by one instance
            for (index, member) in members.enumerated() {
                let items = try #require(try json(try await client.json(.get, "/v1/notifications", token: member.accessToken))["items"] as? [[String: Any]])
                let ended = items.filter { $0["type"] as? String == "week_ended" }
                #expect(ended.count == 1, "member \(index)")
                if index == 1 { #expect((ended.first?["message"] as? String)?.contains("#1 in check-ins (2)") == true) }
                if index == 0 { #expect((ended.first?["message"] as? String)?.contains("no workouts counted") == true) }
            }
            // A closed week's results are final: a late workout of that week does not change them.
            let before = try await database.withConnection { db in
                try await ChallengeScoring.entries(of: try await ChallengeScoring.ensureChallenge(
                    group: GroupID(groupID)!, kind: .checkIns, week: week, now: .now, on: db).id, on: db)
            }
            try await ChallengeTests.log(client, members[0], workout)
            let after = try await database.withConnection { db in
                try await ChallengeScoring.entries(of: try await ChallengeScoring.ensureChallenge(
                    group: GroupID(groupID)!, kind: .checkIns, week: week, now: .now, on: db).id, on: db)
            }
            #expect(before == after)
            // 90 days on, the archive is gone.
            try await rollover.rollOver(at: week.end.addingTimeInterval(WeekRollover.archiveRetention + 60))
            let left = try await database.withConnection { db in try await db.select().column("id").from("challenges").all().count }
            #expect(left == 0)
        }
    }
    @Test(arguments: TestEngines.all)
    func pastWeeksStayReadableAndNamelessMembersGetANumber(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, app in
            let (groupID, members, workout) = try await ChallengeTests.group(client, app.testDatabase, members: 1)
            let nameless = try await client.signUp()
            let token = try #require(try json(try await client.json(.post, "/v1/groups/\(groupID)/invites", token: members[0].accessToken))["token"] as? String)
            try #require(try await client.json(.post, "/v1/invites/\(token)/accept", token: nameless.accessToken).status == .ok)
            try await ChallengeTests.log(client, nameless, workout, at: Date.now.addingTimeInterval(-7 * 86_400))
            try await ChallengeTests.log(client, members[0], workout)
            let challenges = "/v1/groups/\(groupID)/challenges"
            let today = LocalCalendar.today(in: nil)
            // The group's founder has been in it for a month; the nameless member joined today.
            let storage = app.database
            let founder = try #require(UUID(uuidString: members[0].id))
            try await storage.transaction { db in
                try await db.update("group_members").set("joined_at", to: Date.now.addingTimeInterval(-30 * 86_400)).where("user_id", .equal, founder).run()
            }
            // A week that ended before one joined is not theirs to see.
            let beforeJoining = try json(try await client.json(.get, "\(challenges)?week=\(today.adding(days: -7))", token: nameless.accessToken))
            #expect((beforeJoining["items"] as? [Any])?.isEmpty == true)

            let lastWeek = try #require(try json(try await client.json(.get, "\(challenges)?week=\(today.adding(days: -7))", token: members[0].accessToken))["items"] as? [[String: Any]])
            #expect(lastWeek.compactMap { ($0["challenge"] as? [String: Any])?["type"] as? String } == ["checkIns", "streak"])
            let entries = try #require(lastWeek.first?["entries"] as? [[String: Any]])
            #expect(entries.map { $0["userId"] as? String } == [nameless.id])
            let fallback = try #require(entries.first?["displayName"] as? String)
            #expect(fallback.wholeMatch(of: /Member [0-9]{4}/) != nil)
            // The same name on the member list and on this week's boards.
            let listed = try #require(try json(try await client.json(.get, "/v1/groups/\(groupID)/members", token: members[0].accessToken))["items"] as? [[String: Any]])
            #expect(listed.first { $0["userId"] as? String == nameless.id }?["displayName"] as? String == fallback)

            let thisWeek = try #require(try json(try await client.json(.get, challenges, token: nameless.accessToken))["items"] as? [[String: Any]])
            #expect(thisWeek.count == 2)
            #expect((thisWeek.first?["entries"] as? [[String: Any]])?.map { $0["displayName"] as? String } == ["Member 0"])
            #expect((thisWeek.first?["currentUserEntry"]) == nil)
            #expect((try json(try await client.json(.get, "\(challenges)?week=\(today.adding(days: -80))", token: nameless.accessToken))["items"] as? [Any])?.isEmpty == true)

            for (week, reason) in [("yesterday-ish", "date"), (today.adding(days: 8).description, "future"), (today.adding(days: -100).description, "90 days")] {
                let refused = try await client.json(.get, "\(challenges)?week=\(week)", token: nameless.accessToken)
                #expect(refused.status == .badRequest, "\(reason)")
                #expect(String(buffer: refused.body).contains("week"), "\(reason)")
            }
            #expect(try await client.json(.get, challenges, token: try await client.signUp().accessToken).status == .notFound)
        }
    }
}
