import FitBaseCore
import FitBaseTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import Crypto
import SQLKit
import Testing

@testable import FitBaseServer

/// The health audit log: every access is recorded in a per-user hash chain that detects tampering, concurrent reads
/// keep the chains unbroken, and refusals are counted rather than written one by one.
@Suite struct HealthAuditTests {
    @Test(arguments: TestEngines.all)
    func theAuditChainRecordsEveryAccessAndDetectsTampering(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, app in
            let account = try await client.signUp()
            let other = try await client.signUp()
            try await HealthTests.consent(client, account.accessToken)
            try await HealthTests.consent(client, other.accessToken)
            // Concurrent uploads by several users must still make one unbroken chain.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<12 {
                    let token = index.isMultiple(of: 2) ? account.accessToken : other.accessToken
                    group.addTask {
                        let response = try await HealthTests.upload(client, token, (0..<5).map { minute in
                            HealthTests.sample("heartRate", start: "2026-11-20T\(String(format: "%02d", 8 + index % 10)):\(String(format: "%02d", minute)):00Z", ["value": 60 + minute])
                        })
                        #expect(response.status == .ok)
                    }
                }
                try await group.waitForAll()
            }
            _ = try await client.json(.get, "/v1/health/samples", token: account.accessToken)
            _ = try await client.json(.get, "/v1/health/summary?type=heartRate&from=2026-11-19T00:00:00Z&to=2026-11-21T00:00:00Z", token: account.accessToken)
            _ = try await client.json(.get, "/v1/me/export", token: account.accessToken)
            _ = try await client.json(.get, "/v1/sync/changes", token: account.accessToken)

            let mine = try #require(try json(try await client.json(.get, "/v1/me/audit?limit=100", token: account.accessToken))["items"] as? [[String: Any]])
            #expect(Set(mine.map { $0["subjectId"] as? String }) == [account.id])
            #expect(Set(mine.compactMap { $0["action"] as? String }) == ["write", "read", "export", "sync"])
            #expect(mine.filter { $0["action"] as? String == "write" }.count == 6)
            #expect(mine.allSatisfy { ($0["requestId"] as? String)?.isEmpty == false })
            // One chain per user, counted from 1.
            #expect(mine.compactMap { $0["seq"] as? Int }.sorted() == Array(1...10))

            let database = app.database
            let (vault, keysDatabase) = try await SealedCycleDataTests.vault(app.testDatabase, database)
            let keys = try await AuditKey.load(from: vault.keys, masterKey: vault.masterKey, creating: false)
            let key = try #require(AuditKey.current(of: keys))
            let log = AuditLog(database: database, clock: .system)
            let intact = try await log.verify(keys: keys, pageSize: 7)
            #expect(intact.firstBreak == nil && intact.entries == 12 + 4 && intact.chains == 2)  // uploads; list, summary, export, sync
            #expect(intact.digests == 0 && intact.unsigned == 16)
            // The minute's digests: each chain's head signed.
            #expect(try await AuditDigests.sign(with: key, database: database, now: .storageNow) == 2)
            #expect(try await AuditDigests.sign(with: key, database: database, now: .storageNow) == 0)
            let signed = try await log.verify(keys: keys, pageSize: 7)
            #expect(signed.firstBreak == nil && signed.digests == 2 && signed.unsigned == 0)

            let mineID = try #require(UUID(uuidString: account.id))
            // Edited, deleted, reordered: each is found, at the right place.
            try await database.transaction { try await $0.update("audit_entries").set("count", to: 99).where("subject_id", .equal, mineID).where("seq", .equal, 5).run() }
            let edited = try await log.verify(pageSize: 7).firstBreak
            #expect(edited?.subject == mineID && edited?.seq == 5)
            try await database.transaction { try await $0.update("audit_entries").set("count", to: 5).where("subject_id", .equal, mineID).where("seq", .equal, 5).run() }
            #expect(try await log.verify(keys: keys).firstBreak == nil)
            try await database.transaction { db in
                try await db.update("audit_entries").set("seq", to: -1).where("subject_id", .equal, mineID).where("seq", .equal, 8).run()
                try await db.update("audit_entries").set("seq", to: 8).where("subject_id", .equal, mineID).where("seq", .equal, 9).run()
                try await db.update("audit_entries").set("seq", to: 9).where("subject_id", .equal, mineID).where("seq", .equal, -1).run()
            }
            #expect(try await log.verify().firstBreak?.seq == 8)
            try await database.transaction { db in
                try await db.update("audit_entries").set("seq", to: -1).where("subject_id", .equal, mineID).where("seq", .equal, 8).run()
                try await db.update("audit_entries").set("seq", to: 8).where("subject_id", .equal, mineID).where("seq", .equal, 9).run()
                try await db.update("audit_entries").set("seq", to: 9).where("subject_id", .equal, mineID).where("seq", .equal, -1).run()
            }
            #expect(try await log.verify(keys: keys).firstBreak == nil)

            // Rewritten end to end with recomputed hashes (what write access to the database allows): every link holds,
            // but the signed digest no longer names the chain's head.
            let original = try await database.withConnection { db in
                try await AuditLog.select(on: db).where("subject_id", .equal, mineID).orderBy("seq").all().map(AuditLog.entry)
            }
            let rewritten = original.reduce(into: [AuditEntry]()) { rewritten, entry in
                var entry = entry
                if entry.seq == 5 { entry.count = 0 }
                entry.prevHash = rewritten.last?.hash ?? AuditChain.genesis
                entry.hash = AuditChain.hash(of: entry)
                rewritten.append(entry)
            }
            try await database.transaction { db in
                try await db.delete(from: "audit_entries").where("subject_id", .equal, mineID).run()
                for entry in rewritten { try await AuditLog.insert(entry, on: db) }
                try await db.update("audit_heads").set("hash", to: rewritten.last!.hash).where("subject_id", .equal, mineID).run()
            }
            let caught = try #require(try await log.verify(keys: keys).firstBreak)
            #expect(caught.subject == mineID && caught.seq == 10 && caught.reason.contains("rewritten"))
            // The command's check (`fitbase audit verify`) reports it.
            let administration = HealthAdministration(configuration: .testing(app.testDatabase), logger: TestDatabase.logger, clock: .system)
            #expect(try await administration.verifyAuditChain().firstBreak?.contains("rewritten") == true)
            // Re-signing the digest without the key does not help.
            let forgedAt = Date.storageNow
            try await database.transaction { db in
                try await db.update("audit_digests").set("hash", to: rewritten.last!.hash).set("at", to: forgedAt)
                    .set("mac", to: AuditDigests.mac(subject: mineID, seq: 10, hash: rewritten.last!.hash, at: forgedAt, key: SymmetricKey(size: .bits256), previous: ""))
                    .where("subject_id", .equal, mineID).run()
            }
            #expect(try await log.verify(keys: keys).firstBreak?.reason.contains("not signed by the audit key") == true)
            try await database.transaction { db in
                try await db.delete(from: "audit_entries").where("subject_id", .equal, mineID).run()
                for entry in original { try await AuditLog.insert(entry, on: db) }
                try await db.update("audit_heads").set("hash", to: original.last!.hash).where("subject_id", .equal, mineID).run()
                try await db.delete(from: "audit_digests").where("subject_id", .equal, mineID).run()
            }
            #expect(try await AuditDigests.sign(with: key, database: database, now: .storageNow) == 0)  // the head did not move
            try await database.transaction { db in
                try await db.update("audit_heads").set("digested_seq", to: 0).where("subject_id", .equal, mineID).run()
            }
            #expect(try await AuditDigests.sign(with: key, database: database, now: .storageNow) == 1)
            #expect(try await log.verify(keys: keys).firstBreak == nil)

            // The end cut off, head moved back to match: the digest names an entry that is gone.
            try await database.transaction { db in
                try await db.delete(from: "audit_entries").where("subject_id", .equal, mineID).where("seq", .equal, 10).run()
                try await db.update("audit_heads").set("seq", to: 9).set("hash", to: original[8].hash).where("subject_id", .equal, mineID).run()
            }
            let cut = try await log.verify(keys: keys).firstBreak
            #expect(cut?.subject == mineID && cut?.seq == 10)
            // A whole chain deleted: its head (or its digests) still name it.
            let otherID = try #require(UUID(uuidString: other.id))
            try await database.transaction { db in try await db.delete(from: "audit_entries").where("subject_id", .equal, otherID).run() }
            try await database.transaction { db in
                try await db.delete(from: "audit_entries").where("subject_id", .equal, mineID).run()
                for entry in original { try await AuditLog.insert(entry, on: db) }
                try await db.update("audit_heads").set("seq", to: 10).set("hash", to: original.last!.hash).where("subject_id", .equal, mineID).run()
            }
            #expect(try await log.verify(keys: keys).firstBreak?.subject == otherID)
            try await database.transaction { db in try await db.delete(from: "audit_heads").where("subject_id", .equal, otherID).run() }
            #expect(try await log.verify(keys: keys).firstBreak?.subject == otherID)
            if keysDatabase !== database { try await keysDatabase.shutdown() }
        }
    }

    /// The hex the audit chain, digests and stored token hashes are written in.
    @Test func hexIsLowerCaseTwoDigitsPerByte() {
        #expect(hexString([0x00, 0x0f, 0xab, 0xff]) == "000fabff")
        #expect(sha256Hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    /// The canonical JSON cut around the previous hash and the position is the canonical JSON whatever those are, with
    /// text that needs escaping, text beyond ASCII and absent values.
    @Test func theCanonicalJSONPartsJoinIntoTheCanonicalJSON() {
        let awkward = #"quote " back \ ,"seq":1 ,"prevHash":" "# + "é 🏃 \u{1}"
        for (actor, request) in [(UUID(), "r-1"), (nil, awkward), (UUID(), nil)] as [(UUID?, String?)] {
            var entry = AuditEntry(
                seq: 1, at: Date(timeIntervalSince1970: 1_765_000_000.123456), actorID: actor, subjectID: UUID(), action: "read",
                resource: "workoutLogs", count: 3, requestID: request, clientRequestID: request.map { $0 + "!" }, outcome: "allowed",
                prevHash: AuditChain.genesis, hash: ""
            )
            let parts = AuditChain.canonicalJSONParts(of: entry)
            for (seq, previous) in [(Int64(1), AuditChain.genesis), (Int64(987_654_321), sha256Hex("previous"))] {
                entry.seq = seq
                entry.prevHash = previous
                let joined = parts.before + Data(previous.utf8) + parts.between + Data(String(seq).utf8) + parts.after
                #expect(joined == AuditChain.canonicalJSON(of: entry))
            }
        }
    }

    /// Entries with text to escape and text beyond ASCII, appended alone (on PostgreSQL chained by PostgreSQL itself from
    /// the parts), verify: the database's hash is the instance's.
    @Test(arguments: TestEngines.all)
    func entriesChainedInOneStatementVerify(engine: DatabaseEngine) async throws {
        try await TestDatabase.with(engine) { testDatabase in
            let database = try await Database.open(testDatabase.location, logger: TestDatabase.logger)
            try await MigrationRunner.forServer(database: database, logger: TestDatabase.logger).run()
            let audit = AuditLog(database: database, clock: .system)
            let user = UserID()
            var appended: [AuditEntry] = []
            for (index, request) in ["plain", #"quote " back \ "#, "é 🏃 \u{1}", "\u{7f}"].enumerated() {
                let event = AuditEvent(
                    actor: index == 1 ? nil : user, subject: user, action: .read, resource: .workoutLogs, count: index, requestID: request,
                    clientRequestID: request + "-c"
                )
                appended.append(try await database.transaction { db in try await AuditLog.append(event, now: .storageNow, on: db, engine: engine) })
                try await audit.append(event)  // outside a change: on PostgreSQL one statement with no transaction around it
            }
            for entry in appended { #expect(entry.hash == AuditChain.hash(of: entry)) }
            let verdict = try await audit.verify()
            #expect(verdict.firstBreak == nil && verdict.entries == 8)
            try await database.shutdown()
        }
    }

    /// Reads audited at the same moment share transactions (group commit) and every one is still its own link.
    @Test(arguments: TestEngines.all)
    func concurrentAuditedReadsAreAllRecordedInUnbrokenChains(engine: DatabaseEngine) async throws {
        try await TestDatabase.with(engine) { testDatabase in
            let database = try await Database.open(testDatabase.location, logger: TestDatabase.logger)
            try await MigrationRunner.forServer(database: database, logger: TestDatabase.logger).run()
            let audit = AuditLog(database: database, clock: .system)
            let users = [UserID(), UserID()]
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<60 {
                    group.addTask {
                        let user = users[index % 2]
                        try await audit.append(AuditEvent(actor: user, subject: user, action: .read, resource: .healthSamples, count: index, requestID: "r\(index)"))
                    }
                }
                try await group.waitForAll()
            }
            for user in users {
                let entries = try await audit.entries(about: user, offset: 0, limit: 100)
                #expect(entries.map(\.seq) == Array((1...30).reversed()))
            }
            let verdict = try await audit.verify()
            #expect(verdict.firstBreak == nil && verdict.entries == 60 && verdict.chains == 2)
            try await database.shutdown()
        }
    }

    /// A chain's head holds its last entry's position and hash after an entry appended alone and after a run of them
    /// (on SQLite the entry's insert moves the head's hash: ``MoveAuditHeadsWithTheirEntries``), so the next entry
    /// follows on.
    @Test(arguments: TestEngines.all)
    func theHeadHoldsTheLastEntrysHashAfterEveryKindOfAppend(engine: DatabaseEngine) async throws {
        try await TestDatabase.with(engine) { testDatabase in
            let database = try await Database.open(testDatabase.location, logger: TestDatabase.logger)
            try await MigrationRunner.forServer(database: database, logger: TestDatabase.logger).run()
            let user = UserID()
            let event = { @Sendable (count: Int) in AuditEvent(actor: user, subject: user, action: .read, resource: .healthSamples, count: count) }
            let head = { @Sendable () async throws -> (seq: Int64, hash: String)? in
                try await database.withConnection { db in
                    try await db.select().columns("seq", "hash").from("audit_heads").where("subject_id", .equal, user.rawValue).first()
                        .map { (try $0.decode(column: "seq", as: Int64.self), try $0.decode(column: "hash", as: String.self)) }
                }
            }
            let first = try await database.transaction { db in try await AuditLog.append(event(1), now: .storageNow, on: db, engine: engine) }
            #expect(try await head()?.seq == 1)
            #expect(try await head()?.hash == first.hash)
            let run = try await database.transaction { db in try await AuditLog.append(run: (2...6).map(event), now: .storageNow, on: db, engine: engine) }
            #expect(run.first?.prevHash == first.hash)
            #expect(try await head()?.seq == 6)
            #expect(try await head()?.hash == run.last?.hash)
            let next = try await database.transaction { db in try await AuditLog.append(event(7), now: .storageNow, on: db, engine: engine) }
            #expect(next.seq == 7 && next.prevHash == run.last?.hash)
            #expect(try await head()?.hash == next.hash)
            // A run rolled back leaves the head where it was.
            await #expect(throws: (any Error).self) {
                try await database.transaction { db in
                    try await AuditLog.append(run: (8...9).map(event), now: .storageNow, on: db, engine: engine)
                    throw CancellationError()
                }
            }
            #expect(try await head()?.seq == 7)
            #expect(try await head()?.hash == next.hash)
            let verdict = try await AuditLog(database: database, clock: .system).verify()
            #expect(verdict.firstBreak == nil && verdict.entries == 7)
            try await database.shutdown()
        }
    }

    /// Two instances' group commits, each covering several users' chains, never deadlock: each takes the heads in one
    /// order (PostgreSQL reported `deadlock detected` and failed the batch's reads when they did not).
    @Test(arguments: TestEngines.all)
    func groupCommitsOfTwoInstancesTakeHeadsInOneOrder(engine: DatabaseEngine) async throws {
        try await TestDatabase.with(engine) { testDatabase in
            let first = try await Database.open(testDatabase.location, logger: TestDatabase.logger)
            try await MigrationRunner.forServer(database: first, logger: TestDatabase.logger).run()
            let second = try await Database.open(testDatabase.location, logger: TestDatabase.logger)
            let audits = [AuditLog(database: first, clock: .system), AuditLog(database: second, clock: .system)]
            let users = (0..<6).map { _ in UserID() }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<600 {
                    group.addTask {
                        // Each instance meets the users in the opposite order.
                        let user = index % 2 == 0 ? users[(index / 2) % 6] : users[5 - (index / 2) % 6]
                        try await audits[index % 2].append(AuditEvent(actor: user, subject: user, action: .read, resource: .healthSamples, count: 1))
                    }
                }
                try await group.waitForAll()
            }
            let verdict = try await audits[0].verify()
            #expect(verdict.firstBreak == nil && verdict.entries == 600 && verdict.chains == 6)
            #expect(AuditLog.inHeadOrder([users[1], users[0], users[1]].enumerated().map { AuditEvent(actor: $1, subject: $1, action: .read, resource: .healthSamples, count: $0) }).map(\.count)
                == (users[0].rawValue.uuidString < users[1].rawValue.uuidString ? [1, 0, 2] : [0, 2, 1]))
            try await second.shutdown()
            try await first.shutdown()
        }
    }

    /// The digest signer moves the heads it signs in the order batches of audited reads take them: signing while two
    /// instances append for the same users never deadlocks (PostgreSQL answered `deadlock detected` to a batch of reads
    /// when the signer took the heads in the order it found them, in the benchmark's 32-account run). A stress check:
    /// the deadlock needs the signer to hold one head while a batch holds another, which this makes likely, not certain.
    @Test(arguments: TestEngines.all)
    func signingDigestsWhileReadsAreAuditedNeverDeadlocks(engine: DatabaseEngine) async throws {
        try await TestDatabase.with(engine) { testDatabase in
            let first = try await Database.open(testDatabase.location, logger: TestDatabase.logger)
            try await MigrationRunner.forServer(database: first, logger: TestDatabase.logger).run()
            let second = try await Database.open(testDatabase.location, logger: TestDatabase.logger)
            let audits = [AuditLog(database: first, clock: .system), AuditLog(database: second, clock: .system)]
            let key = AuditKey(id: "test", key: SymmetricKey(size: .bits256))
            let users = (0..<12).map { _ in UserID() }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<480 {
                    group.addTask {
                        let user = index % 2 == 0 ? users[(index / 2) % 12] : users[11 - (index / 2) % 12]
                        try await audits[index % 2].append(AuditEvent(actor: user, subject: user, action: .read, resource: .healthSamples, count: 1))
                    }
                }
                for database in [first, second] {
                    group.addTask {
                        for _ in 0..<20 { try await AuditDigests.sign(with: key, database: database, now: .storageNow) }
                    }
                }
                try await group.waitForAll()
            }
            let verdict = try await audits[0].verify()
            #expect(verdict.firstBreak == nil && verdict.entries == 480 && verdict.chains == 12)
            try await second.shutdown()
            try await first.shutdown()
        }
    }

    /// A client refused again and again (no consent) writes nothing per request: the refusals are counted and written
    /// as one entry per user, action and resource, with the count, when the minute's flush runs.
    @Test(arguments: TestEngines.all)
    func refusalsAreCountedNotWrittenOneByOne(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, app in
            let account = try await client.signUp()
            for _ in 0..<50 {
                #expect(try await client.json(.get, "/v1/health/samples", token: account.accessToken).status == .forbidden)
            }
            let user = UserID(rawValue: try #require(UUID(uuidString: account.id)))
            let database = app.database
            let audit = AuditLog(database: database, clock: .system)
            #expect(try await audit.entries(about: user, offset: 0, limit: 100).isEmpty)
            // What the flush does with them (the server's tally is its own; this one is counted the same way).
            for _ in 0..<50 {
                try await audit.append(AuditEvent(actor: user, subject: user, action: .read, resource: .healthSamples, count: 0, outcome: .denied))
            }
            try await audit.append(AuditEvent(actor: user, subject: user, action: .write, resource: .healthSamples, count: 0, outcome: .denied))
            #expect(try await audit.entries(about: user, offset: 0, limit: 100).isEmpty)
            #expect(try await audit.flushRefusals() == 2)
            #expect(try await audit.flushRefusals() == 0)
            let written = try await audit.entries(about: user, offset: 0, limit: 100)
            #expect(written.count == 2 && written.allSatisfy { $0.outcome == "denied" })
            #expect(Set(written.map(\.count)) == [50, 1])
            #expect(try await audit.verify().firstBreak == nil)
        }
    }

    /// A sample uploaded again after its deletion is a new version of the record: its feed entry goes past the
}
