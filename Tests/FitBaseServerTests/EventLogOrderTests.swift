import FitBaseCore
import FitBaseTestSupport
import Foundation
import SQLKit
import Testing

@testable import FitBaseServer

/// Events commit in id order, so a reader of "the events after id N" never misses one: on PostgreSQL each event gets
/// its id at its transaction's commit, under the deployment's event lock (``PublishEventsAtCommit``), in the order its
/// transaction appended it — an event whose id is wanted at once (a membership's) included.
@Suite struct EventLogOrderTests {
    /// How many writers have finished.
    actor Finished {
        var count = 0
        func one() { count += 1 }
    }

    static func withDatabase(_ engine: DatabaseEngine, _ body: @escaping @Sendable (Database) async throws -> Void) async throws {
        try await TestDatabase.with(engine, migrated: true) { testDatabase in
            let database = try await Database.open(testDatabase.location, logger: TestDatabase.logger)
            do {
                try await body(database)
            } catch {
                try? await database.shutdown()
                throw error
            }
            try await database.shutdown()
        }
    }

    static func all(_ database: Database) async throws -> [RealtimeEvent] {
        try await database.withConnection { db in try await EventLog.events(after: 0, limit: 10_000, on: db) }
    }

    /// A transaction's events keep the order of its calls, whether their ids are given at commit or at once, and none
    /// shows before the commit; a rolled-back transaction leaves none (and nothing pending).
    @Test(arguments: TestEngines.all)
    func aTransactionsEventsKeepTheOrderOfItsCalls(engine: DatabaseEngine) async throws {
        try await Self.withDatabase(engine) { database in
            let user = UserID(rawValue: UUID())
            let now = Date()
            let joined = try await database.transaction { db in
                try await EventLog.append(topic: .user(user), type: "first", data: ["n": "1"], now: now, on: db)
                let joined = try await EventLog.membershipChanged(of: user, to: GroupID(rawValue: UUID()), now: now, on: db)
                try await EventLog.append(topic: .user(user), type: "third", data: ["n": "3"], now: now, on: db)
                // Another connection sees nothing yet (on SQLite a read in the transaction's task is the transaction's own).
                if engine == .postgres { #expect(try await Self.all(database).isEmpty) }
                return joined
            }
            let events = try await Self.all(database)
            #expect(events.map(\.type) == ["first", EventLog.membership, "third"])
            #expect(events.map(\.id) == events.map(\.id).sorted() && events[1].id == joined)

            struct Abandoned: Error {}
            await #expect(throws: Abandoned.self) {
                try await database.transaction { db in
                    try await EventLog.append(topic: .user(user), type: "never", data: ["n": "4"], now: now, on: db)
                    throw Abandoned()
                }
            }
            #expect(try await Self.all(database).map(\.type) == ["first", EventLog.membership, "third"])
            if engine == .postgres {
                let pending = try await database.withConnection { db in try await db.raw(#"SELECT count(*) AS "n" FROM "events_pending""#).first() }
                #expect(try pending?.decode(column: "n", as: Int.self) == 0)
            }
        }
    }

    /// Many transactions at once, each appending events, some of them with ids wanted at once: a reader polling "after
    /// the last id I saw" meanwhile ends up with every event, each once, in id order — none committed behind its back
    /// with a smaller id.
    @Test(arguments: TestEngines.all)
    func aReaderFollowingTheLogWhileManyWriteMissesNone(engine: DatabaseEngine) async throws {
        try await Self.withDatabase(engine) { database in
            let writers = 16, rounds = 10
            let done = Finished()
            let reader = Task { @Sendable () async throws -> [RealtimeEvent] in
                var seen: [RealtimeEvent] = []
                while true {
                    let finished = await done.count == writers
                    let after = seen.last?.id ?? 0
                    seen += try await database.withConnection { db in try await EventLog.events(after: after, limit: 1_000, on: db) }
                    if finished { return seen }
                    try await Task.sleep(for: .milliseconds(2))
                }
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 0..<writers {
                    group.addTask {
                        let user = UserID(rawValue: UUID())
                        for round in 0..<rounds {
                            try await database.transaction { db in
                                try await EventLog.append(topic: .user(user), type: "w\(writer)", data: ["round": "\(round)a"], now: Date(), on: db)
                                if round % 3 == 0 {
                                    try await EventLog.membershipChanged(of: user, to: nil, now: Date(), on: db)
                                }
                                try await EventLog.append(topic: .user(user), type: "w\(writer)", data: ["round": "\(round)b"], now: Date(), on: db)
                            }
                        }
                        await done.one()
                    }
                }
                try await group.waitForAll()
            }
            let seen = try await reader.value
            let stored = try await Self.all(database)
            let perWriter = 2 * rounds + (rounds + 2) / 3
            #expect(stored.count == writers * perWriter)
            #expect(seen.map(\.id) == stored.map(\.id), "the reader missed \(Set(stored.map(\.id)).subtracting(seen.map(\.id)).count) events")
            // Each writer's events in the order it wrote them.
            for writer in 0..<writers {
                let rounds = stored.filter { $0.type == "w\(writer)" }.map(\.data)
                #expect(rounds == (0..<10).flatMap { [#"{"round":"\#($0)a"}"#, #"{"round":"\#($0)b"}"#] })
            }
        }
    }
}
