import FitBaseCore
import FitBaseTestSupport
import Foundation
import SQLKit
import Synchronization
import Testing

@testable import FitBaseServer

/// SQLite write transactions that arrive together share commits (``GroupCommit``), and each still behaves as a
/// transaction of its own: a failing one leaves nothing, the others everything, each returns only once its commit is
/// made, and after-commit work runs for the committed ones only.
@Suite struct GroupCommitTests {
    struct Refused: Error {}

    final class Seen: Sendable {
        let numbers = Mutex<Set<Int>>([])
    }

    /// True for the first caller only.
    final class FirstBody: Sendable {
        private let pending = Atomic(true)
        func take() -> Bool { pending.exchange(false, ordering: .relaxed) }
    }


    @Test func transactionsArrivingTogetherShareCommitsAndEachKeepsItsOwnOutcome() async throws {
        try await TestDatabase.with(.sqlite) { testDatabase in
            let database = try await Database.open(testDatabase.location, checkpointsInBackground: false, logger: TestDatabase.logger)
            let groups = try #require(database.commitGroups)
            let endedBefore = groups.groupsEnded
            try await Self.expectEachKeepsItsOwnOutcome(
                on: database, count: 300, queue: 50, transaction: { body in try await database.transaction(body) },
                waiting: { database.writersWaiting }, groupsEnded: { groups.groupsEnded - endedBefore }
            )
            try await database.shutdown()
        }
    }

    /// `count` transactions started together through `transaction`, the first body waiting until `waiting()` says
    /// `queue` more wait behind it (so grouping does not depend on scheduling luck): each writes its row and asks for
    /// after-commit work, and every seventh throws after writing. Expects the kept rows alone stored, each visible
    /// once its transaction returned, after-commit work for the kept ones only, and fewer commits (`groupsEnded()`)
    /// than transactions.
    static func expectEachKeepsItsOwnOutcome(
        on database: Database, count: Int, queue: Int,
        transaction: @escaping @Sendable (@escaping @Sendable (any SQLDatabase) async throws -> Void) async throws -> Void,
        waiting: @escaping @Sendable () -> Int, groupsEnded: () -> Int
    ) async throws {
        try await database.transaction { db in try await db.raw("CREATE TABLE group_commit_rows (n INTEGER NOT NULL)").run() }
        let afterCommit = Seen()
        let first = FirstBody()
        let outcomes = try await withThrowingTaskGroup(of: (Int, Bool).self) { tasks in
            for n in 0..<count {
                tasks.addTask {
                    do {
                        try await transaction { db in
                            if first.take() {
                                while waiting() < queue { await Task.yield() }
                            }
                            try await db.raw("INSERT INTO group_commit_rows (n) VALUES (\(bind: n))").run()
                            TransactionHooks.current?.afterCommit(key: "seen") { afterCommit.numbers.withLock { _ = $0.insert(n) } }
                            if n % 7 == 3 { throw Refused() }  // after writing: its row must go with it
                        }
                        // Returned: the commit is made, so another connection reads the row.
                        let visible = try await database.withConnection { db in
                            try await db.raw("SELECT COUNT(*) AS c FROM group_commit_rows WHERE n = \(bind: n)").first()?.decode(column: "c", as: Int.self)
                        }
                        #expect(visible == 1, "row \(n) not committed when its transaction returned")
                        return (n, true)
                    } catch is Refused {
                        return (n, false)
                    }
                }
            }
            var outcomes: [Int: Bool] = [:]
            for try await (n, committed) in tasks { outcomes[n] = committed }
            return outcomes
        }
        let stored = try await database.withConnection { db in
            try await db.raw("SELECT n FROM group_commit_rows ORDER BY n").all().map { try $0.decode(column: "n", as: Int.self) }
        }
        let expected = (0..<count).filter { $0 % 7 != 3 }
        #expect(stored == expected)
        #expect(outcomes.filter(\.value).keys.sorted() == expected)
        #expect(afterCommit.numbers.withLock { $0 } == Set(expected))
        // Fewer commits than transactions: they were grouped.
        let ended = groupsEnded()
        #expect(ended > 0 && ended < count, "\(ended) commits for \(count) transactions")
    }

    /// What members ask to run before the commit runs once for their group, after the last of them, and only for the
    /// members whose work is kept: one audit entry per kept member (its own time and request id, one unbroken chain),
    /// none for a member rolled back, and the group's one sync nudge carries the last position the kept members took.
    @Test func auditEntriesAndNudgesOfAGroupAreWrittenOnceForTheKeptMembers() async throws {
        try await TestDatabase.with(.sqlite) { testDatabase in
            let database = try await Database.open(testDatabase.location, checkpointsInBackground: false, logger: TestDatabase.logger)
            try await MigrationRunner.forServer(database: database, logger: TestDatabase.logger).run()
            let groups = try #require(database.commitGroups)
            let endedBefore = groups.groupsEnded
            try await Self.expectKeptMembersAuditedAndNudged(
                on: database, queue: 40, transaction: { _, body in try await database.transaction(body) },
                waiting: { _ in database.writersWaiting }, groupsEnded: { groups.groupsEnded - endedBefore }
            )
            try await database.shutdown()
        }
    }

    /// 120 transactions of one new user started together through `transaction` (given the user), the first body
    /// waiting until `waiting(user)` says `queue` more wait behind it: each, in a request scope of its own, takes a feed
    /// position and asks for an audit entry at its own time, and every fifth throws after that. Expects one audit
    /// entry per kept member (its time and request id, one unbroken chain) and none for the others, feed positions
    /// without gaps, and fewer nudges than commits (`groupsEnded()`, itself fewer than the transactions), the last
    /// naming the last position.
    static func expectKeptMembersAuditedAndNudged(
        on database: Database, queue: Int,
        transaction: @escaping @Sendable (UserID, @escaping @Sendable (any SQLDatabase) async throws -> Void) async throws -> Void,
        waiting: @escaping @Sendable (UserID) -> Int, groupsEnded: () -> Int
    ) async throws {
        let engine = database.engine
        let user = UserID()
        let count = 120
        let first = FirstBody()
        let start = Date.storageNow
        try await database.transaction { db in
            try await db.insert(into: "users").columns("id", "email", "role", "created_at", "updated_at")
                .values(SQLBind(user.rawValue), SQLBind("grouped@example.com"), SQLBind("user"), SQLBind(start), SQLBind(start)).run()
        }
        let kept = try await withThrowingTaskGroup(of: Int?.self) { tasks in
            for n in 0..<count {
                tasks.addTask {
                    do {
                        try await RequestScope.$current.withValue(RequestScope(caller: nil, authenticationFailure: nil, requestID: "request-\(n)")) {
                            try await transaction(user) { db in
                                if first.take() {
                                    while waiting(user) < queue { await Task.yield() }
                                }
                                try await SyncFeed.record(.plans, id: UUID().lowercasedString, of: user, deleted: false, updatedAt: start, changedAt: start, currentVersion: 0, on: db)
                                try await AuditLog.appendAtCommit(
                                    AuditEvent(actor: user, subject: user, action: .write, resource: .workoutLogs, count: 1),
                                    now: start.addingTimeInterval(Double(n)), on: db, engine: engine
                                )
                                #expect(RequestScope.current.requestID == "request-\(n)")
                                if n % 5 == 2 { throw Refused() }  // after asking: nothing of it may be written
                            }
                        }
                        return n
                    } catch is Refused {
                        return nil
                    }
                }
            }
            var kept: [Int] = []
            for try await n in tasks { if let n { kept.append(n) } }
            return kept.sorted()
        }
        #expect(kept == (0..<count).filter { $0 % 5 != 2 })
        let ended = groupsEnded()
        #expect(ended < count, "\(ended) commits for \(count) transactions")

        let audit = AuditLog(database: database, clock: .system)
        let entries = try await audit.entries(about: user, offset: 0, limit: 500)
        #expect(entries.count == kept.count)
        #expect(Set(entries.compactMap(\.requestID)) == Set(kept.map { "request-\($0)" }))
        // Each entry keeps the time of its own change.
        for entry in entries {
            let n = try #require(entry.requestID.flatMap { Int($0.dropFirst("request-".count)) })
            #expect(abs(entry.at.timeIntervalSince(start.addingTimeInterval(Double(n)))) < 0.001)
        }
        #expect(try await audit.verify().firstBreak == nil)

        // Positions without gaps; nudges fewer than the commits, the last naming the user's last position.
        let (sequences, nudges, last) = try await database.withConnection { db in
            (
                try await db.raw("SELECT seq FROM sync_changes WHERE user_id = \(bind: user.rawValue) ORDER BY seq").all().map { try $0.decode(column: "seq", as: Int.self) },
                try await db.select().column("data").from("events").where("topic", .equal, EventTopic.user(user).name).where("type", .equal, "sync")
                    .orderBy("id").all().map { try $0.decode(column: "data", as: String.self) },
                try await SyncFeed.position(of: user, on: db).last
            )
        }
        #expect(sequences == Array(1...kept.count))
        #expect(last == kept.count)
        #expect(!nudges.isEmpty && nudges.count <= ended)
        #expect(nudges.last == #"{"cursor":"\#(SyncWire.cursor(sequence: last))"}"#)
    }

    /// Transactions queued behind a running one are run by the holder of the write gate, in its group: each body still
    /// sees its own request's scope (its audit entries name its own request), and reads through the database inside it
    /// see its own transaction's writes.
    @Test func aQueuedTransactionRunByAnotherSeesItsOwnRequestScope() async throws {
        try await TestDatabase.with(.sqlite) { testDatabase in
            let database = try await Database.open(testDatabase.location, checkpointsInBackground: false, logger: TestDatabase.logger)
            try await database.transaction { db in try await db.raw("CREATE TABLE scoped_rows (n INTEGER NOT NULL, request TEXT)").run() }
            let count = 64
            let first = FirstBody()
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                for n in 0..<count {
                    tasks.addTask {
                        let scope = RequestScope(caller: nil, authenticationFailure: nil, requestID: "request-\(n)")
                        try await RequestScope.$current.withValue(scope) {
                            try await database.transaction { db in
                                if first.take() {
                                    while database.writersWaiting < 20 { await Task.yield() }
                                }
                                try await db.raw("INSERT INTO scoped_rows (n, request) VALUES (\(bind: n), \(bind: RequestScope.current.requestID))").run()
                                let own = try await database.withConnection { db in
                                    try await db.raw("SELECT COUNT(*) AS c FROM scoped_rows WHERE n = \(bind: n)").first()?.decode(column: "c", as: Int.self)
                                }
                                #expect(own == 1, "transaction \(n) does not read its own write")
                            }
                        }
                    }
                }
                try await tasks.waitForAll()
            }
            let rows = try await database.withConnection { db in
                try await db.raw("SELECT n, request FROM scoped_rows ORDER BY n").all().map {
                    (try $0.decode(column: "n", as: Int.self), try $0.decode(column: "request", as: String?.self))
                }
            }
            #expect(rows.map(\.0) == Array(0..<count))
            #expect(rows.allSatisfy { $0.1 == "request-\($0.0)" }, "\(rows.filter { $0.1 != "request-\($0.0)" })")
            try await database.shutdown()
        }
    }
}
