import FitBaseCore
import FitBaseTestSupport
import Foundation
import SQLKit
import Testing

@testable import FitBaseServer

/// PostgreSQL write transactions of one user that arrive together share a transaction and its commit
/// (``KeyedCommitGroups``), and each still behaves as a transaction of its own: a failing one leaves nothing, the
/// others everything, each returns only once its commit is made, after-commit work runs for the committed ones only;
/// other users' transactions never wait for the group, and a grouped transaction inside a member is not queued behind
/// its own group.
@Suite(.enabled(if: TestEngines.all.contains(.postgres), "needs FITBASE_TEST_POSTGRES_URL"))
struct KeyedGroupCommitTests {
    @Test func transactionsOfOneUserShareCommitsAndEachKeepsItsOwnOutcome() async throws {
        try await TestDatabase.with(.postgres) { testDatabase in
            let database = try await Database.open(testDatabase.location, logger: TestDatabase.logger)
            let groups = try #require(database.keyedGroups)
            let key = UUID()
            try await GroupCommitTests.expectEachKeepsItsOwnOutcome(
                on: database, count: 200, queue: 30, transaction: { body in try await database.transaction(groupedBy: key, body) },
                waiting: { groups.waiting(for: key) }, groupsEnded: { groups.groupsEnded }
            )
            #expect(groups.waiting(for: key) == 0)
            try await database.shutdown()
        }
    }

    /// A user's feed positions and audit entries written by the members of groups: one unbroken chain with an entry per
    /// kept member (its own request id), none for a member rolled back; positions without gaps; the last nudge names
    /// the last position.
    @Test func feedPositionsAuditEntriesAndNudgesOfGroupedWritesAreThoseOfTheKeptMembers() async throws {
        try await TestDatabase.with(.postgres, migrated: true) { testDatabase in
            let database = try await Database.open(testDatabase.location, logger: TestDatabase.logger)
            let groups = try #require(database.keyedGroups)
            try await GroupCommitTests.expectKeptMembersAuditedAndNudged(
                on: database, queue: 30, transaction: { user, body in try await database.transaction(groupedBy: user.rawValue, body) },
                waiting: { user in groups.waiting(for: user.rawValue) }, groupsEnded: { groups.groupsEnded }
            )
            try await database.shutdown()
        }
    }

    /// While one user's group is held open, another user's transaction commits; a grouped transaction for the same user
    /// inside a member runs as a plain one instead of waiting for the group it is part of.
    @Test func otherUsersNeverWaitAndANestedTransactionOfTheSameUserIsNotQueuedBehindItsGroup() async throws {
        try await TestDatabase.with(.postgres) { testDatabase in
            let database = try await Database.open(testDatabase.location, logger: TestDatabase.logger)
            try await database.transaction { db in try await db.raw("CREATE TABLE keyed_users (k TEXT NOT NULL)").run() }
            let (held, other) = (UUID(), UUID())
            let (released, release) = AsyncStream.makeStream(of: Void.self)
            let (reached, reach) = AsyncStream.makeStream(of: Void.self)
            let holding = Task {
                try await database.transaction(groupedBy: held) { db in
                    try await db.raw("INSERT INTO keyed_users (k) VALUES ('held')").run()
                    // Nested, same user: would wait for this very group were it queued.
                    try await database.transaction(groupedBy: held) { db in try await db.raw("INSERT INTO keyed_users (k) VALUES ('nested')").run() }
                    reach.yield()
                    for await _ in released { break }
                }
            }
            for await _ in reached { break }
            try await database.transaction(groupedBy: other) { db in try await db.raw("INSERT INTO keyed_users (k) VALUES ('other')").run() }
            let before = try await database.withConnection { db in
                try await db.raw("SELECT k FROM keyed_users ORDER BY k").all().map { try $0.decode(column: "k", as: String.self) }
            }
            #expect(before == ["nested", "other"])
            release.yield()
            release.finish()
            try await holding.value
            let after = try await database.withConnection { db in
                try await db.raw("SELECT k FROM keyed_users ORDER BY k").all().map { try $0.decode(column: "k", as: String.self) }
            }
            #expect(after == ["held", "nested", "other"])
            try await database.shutdown()
        }
    }
}
