import Crypto
import FitBaseCore
import FitBaseTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import SQLKit
import Testing

@testable import FitBaseServer

/// An audit log that cannot be cut (accounts part 3): digests chained, and checkpoints kept outside the database.
@Suite struct AuditCheckpointTests {
    @Test(arguments: TestEngines.all)
    func aCutADeletedChainAndAMissingDigestAreFound(engine: DatabaseEngine) async throws {
        try await withApp(engine) { client, app in
            let ana = try await client.signUp()
            let bo = try await client.signUp()
            func upload(_ account: TestAccount, _ minute: Int) async throws {
                if minute == 0 { try await HealthTests.consent(client, account.accessToken) }
                let sample = HealthTests.sample("heartRate", start: "2026-11-20T09:\(String(format: "%02d", minute)):00Z", ["value": 60 + minute])
                #expect(try await HealthTests.upload(client, account.accessToken, [sample]).status == .ok)
            }
            for minute in 0..<4 {
                try await upload(ana, minute)
                try await upload(bo, minute)
            }
            let database = app.database
            let (vault, keysDatabase) = try await SealedCycleDataTests.vault(app.testDatabase, database)
            let keys = try await AuditKey.load(from: vault.keys, masterKey: vault.masterKey, creating: false)
            let key = try #require(AuditKey.current(of: keys))
            let log = AuditLog(database: database, clock: .system)
            let anaID = try #require(UUID(uuidString: ana.id))
            let boID = try #require(UUID(uuidString: bo.id))
            let administration = HealthAdministration(configuration: .testing(app.testDatabase), logger: TestDatabase.logger, clock: .system)
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("checkpoint-\(UUID().uuidString.prefix(8)).json").path
            defer { try? FileManager.default.removeItem(atPath: file) }

            // Two digests on each chain, the second linked to the first.
            #expect(try await AuditDigests.sign(with: key, database: database, now: .storageNow) == 2)
            try await upload(ana, 10)
            try await upload(bo, 10)
            #expect(try await AuditDigests.sign(with: key, database: database, now: .storageNow) == 2)
            #expect(try await administration.writeAuditCheckpoint(to: file) == 2)
            let intact = try await administration.verifyAuditChain(checkpointFile: file)
            #expect(intact.firstBreak == nil && intact.checkpoints == 2 && intact.digests == 4)

            // A digest removed from the middle of a chain's digests.
            let firstDigest = try await database.withConnection { db in
                try #require(try await db.select().columns("seq", "hash", "at", "key_id", "mac", "prev_mac").from("audit_digests")
                    .where("subject_id", .equal, anaID).orderBy("seq").first())
            }
            let firstSeq = try firstDigest.decode(column: "seq", as: Int64.self)
            try await database.transaction { db in
                try await db.delete(from: "audit_digests").where("subject_id", .equal, anaID).where("seq", .equal, firstSeq).run()
            }
            #expect(try await log.verify(keys: keys).firstBreak?.reason.contains("digests were deleted") == true)
            try await database.transaction { db in
                try await db.insert(into: "audit_digests").columns("subject_id", "seq", "hash", "at", "key_id", "mac", "prev_mac").values(
                    SQLBind(anaID), SQLBind(firstSeq), SQLBind(try firstDigest.decode(column: "hash", as: String.self)),
                    SQLBind(try firstDigest.decode(column: "at", as: Date.self)), SQLBind(try firstDigest.decode(column: "key_id", as: String.self)),
                    SQLBind(try firstDigest.decode(column: "mac", as: String.self)), SQLBind(try firstDigest.decode(column: "prev_mac", as: String?.self))
                ).run()
            }
            #expect(try await log.verify(keys: keys).firstBreak == nil)

            // The cut of part 3: the newest entries of Ana's chain, their digests, the head rewound to match and the
            // database's checkpoints — the database alone still verifies; the checkpoint kept outside it does not.
            let head = try await database.withConnection { db in
                try #require(try await db.select().columns("seq").from("audit_heads").where("subject_id", .equal, anaID).first()).decode(column: "seq", as: Int64.self)
            }
            let keptHash = try await database.withConnection { db in
                try #require(try await db.select().column("hash").from("audit_entries").where("subject_id", .equal, anaID).where("seq", .equal, head - 2).first())
                    .decode(column: "hash", as: String.self)
            }
            try await database.transaction { db in
                try await db.delete(from: "audit_entries").where("subject_id", .equal, anaID).where("seq", .greaterThan, head - 2).run()
                try await db.delete(from: "audit_digests").where("subject_id", .equal, anaID).where("seq", .greaterThan, head - 2).run()
                try await db.update("audit_heads").set("seq", to: head - 2).set("hash", to: keptHash).set("digested_seq", to: head - 2)
                    .where("subject_id", .equal, anaID).run()
                try await db.delete(from: "audit_checkpoints").run()
            }
            #expect(try await administration.verifyAuditChain().firstBreak == nil)
            let cut = try #require(try await administration.verifyAuditChain(checkpointFile: file).firstBreak)
            #expect(cut.contains(anaID.uuidString.lowercased()) && cut.contains("cut or deleted"))

            // A whole chain deleted with its head and digests: the database alone verifies; the checkpoint names it.
            try await database.transaction { db in
                for table in ["audit_entries", "audit_digests", "audit_heads"] { try await db.delete(from: table).where("subject_id", .equal, boID).run() }
            }
            let deleted = try #require(try await administration.verifyAuditChain(checkpointFile: file).firstBreak)
            #expect(deleted.contains("cut or deleted"))

            // A checkpoint file edited to match the cut is not signed by the audit key.
            var forged = try AuditCheckpoint.decoder.decode(AuditCheckpoint.self, from: Data(contentsOf: URL(fileURLWithPath: file)))
            forged.heads = forged.heads.filter { $0.subject != boID }.map { head in
                head.subject == anaID ? AuditCheckpoint.Head(subject: anaID, seq: head.seq - 2, hash: keptHash) : head
            }
            forged.chains = forged.heads.count
            forged.root = AuditCheckpoint.root(of: forged.heads)
            try AuditCheckpoint.encoder.encode(forged).write(to: URL(fileURLWithPath: file))
            #expect(try await administration.verifyAuditChain(checkpointFile: file).firstBreak?.contains("not signed by the audit key") == true)
            if keysDatabase !== database { try await keysDatabase.shutdown() }
        }
    }
}
