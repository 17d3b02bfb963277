import FitBaseTestSupport
import Foundation
import NIOPosix
import SQLKit
import SQLiteKit
import SQLiteNIO
import Synchronization
import Testing

@testable import FitBaseServer

/// One value of every kind the stores bind, with the column types the migrations give them on SQLite.
struct BindSample: Equatable, Codable {
    static let table = """
        CREATE TABLE samples (id TEXT PRIMARY KEY, at REAL NOT NULL, uuid TEXT NOT NULL, flag INTEGER NOT NULL, \
        other_flag INTEGER NOT NULL, data BLOB NOT NULL, empty_data BLOB, bytes TEXT NOT NULL, biggest INTEGER NOT NULL, \
        smallest INTEGER NOT NULL, count INTEGER NOT NULL, ratio REAL NOT NULL, whole REAL NOT NULL, text TEXT NOT NULL, \
        empty_text TEXT NOT NULL, missing TEXT, present TEXT, json TEXT NOT NULL, untyped)
        """

    struct Document: Equatable, Codable {
        var name: String
        var weeks: [Int]
        var note: String?
    }

    var at: Date
    var uuid: UUID
    var flag: Bool
    var otherFlag: Bool
    var data: Data
    var emptyData: Data?
    var bytes: [UInt8]
    var biggest: Int64
    var smallest: Int64
    var count: Int
    var ratio: Double
    var whole: Double
    var text: String
    var emptyText: String
    var missing: String?
    var present: String?
    var json: Document
    var untyped: Double

    static func make() -> BindSample {
        BindSample(
            at: Date.storageNow, uuid: UUID(), flag: true, otherFlag: false, data: Data([0, 1, 2, 0xFF, 0]), emptyData: nil,
            bytes: [9, 8, 7], biggest: .max, smallest: .min, count: -42, ratio: 3.141592653589793, whole: 2,
            text: "Grüße 🏋️ \"quoted\" 'single'", emptyText: "", missing: nil, present: "here",
            json: Document(name: "Plan", weeks: [1, 2, 3], note: nil), untyped: 0.1
        )
    }

    func insert(id: String, on db: any SQLDatabase) async throws {
        try await db.insert(into: "samples")
            .columns("id", "at", "uuid", "flag", "other_flag", "data", "empty_data", "bytes", "biggest", "smallest", "count",
                     "ratio", "whole", "text", "empty_text", "missing", "present", "json", "untyped")
            .values(
                SQLBind(id), SQLBind(at), SQLBind(uuid), SQLBind(flag), SQLBind(otherFlag), SQLBind(data), SQLBind(emptyData),
                SQLBind(bytes), SQLBind(biggest), SQLBind(smallest), SQLBind(count), SQLBind(ratio), SQLBind(whole), SQLBind(text),
                SQLBind(emptyText), SQLBind(missing), SQLBind(present), SQLBind(json), SQLBind(untyped)
            )
            .run()
    }

    init(
        at: Date, uuid: UUID, flag: Bool, otherFlag: Bool, data: Data, emptyData: Data?, bytes: [UInt8], biggest: Int64,
        smallest: Int64, count: Int, ratio: Double, whole: Double, text: String, emptyText: String, missing: String?,
        present: String?, json: Document, untyped: Double
    ) {
        (self.at, self.uuid, self.flag, self.otherFlag, self.data, self.emptyData, self.bytes) = (at, uuid, flag, otherFlag, data, emptyData, bytes)
        (self.biggest, self.smallest, self.count, self.ratio, self.whole) = (biggest, smallest, count, ratio, whole)
        (self.text, self.emptyText, self.missing, self.present, self.json, self.untyped) = (text, emptyText, missing, present, json, untyped)
    }

    init(row: any SQLRow) throws {
        self.init(
            at: try row.decode(column: "at", as: Date.self), uuid: try row.decode(column: "uuid", as: UUID.self),
            flag: try row.decode(column: "flag", as: Bool.self), otherFlag: try row.decode(column: "other_flag", as: Bool.self),
            data: try row.decode(column: "data", as: Data.self), emptyData: try row.decode(column: "empty_data", as: Data?.self),
            bytes: try row.decode(column: "bytes", as: [UInt8].self), biggest: try row.decode(column: "biggest", as: Int64.self),
            smallest: try row.decode(column: "smallest", as: Int64.self), count: try row.decode(column: "count", as: Int.self),
            ratio: try row.decode(column: "ratio", as: Double.self), whole: try row.decode(column: "whole", as: Double.self),
            text: try row.decode(column: "text", as: String.self), emptyText: try row.decode(column: "empty_text", as: String.self),
            missing: try row.decode(column: "missing", as: String?.self), present: try row.decode(column: "present", as: String?.self),
            json: try row.decode(column: "json", as: Document.self), untyped: try row.decode(column: "untyped", as: Double.self)
        )
    }
}

/// A one-shot event a task can wait for.
final class OneShotSignal: Sendable {
    private let state = Mutex<(fired: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func fire() {
        let waiters = state.withLock { state in
            state.fired = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    func wait() async {
        await withCheckedContinuation { continuation in
            let fired = state.withLock { state in
                if !state.fired { state.waiters.append(continuation) }
                return state.fired
            }
            if fired { continuation.resume() }
        }
    }
}

/// The order in which tasks got somewhere.
final class ArrivalOrder: Sendable {
    private let state = Mutex<[String]>([])
    var values: [String] { state.withLock { $0 } }
    func append(_ value: String) { state.withLock { $0.append(value) } }
}

/// How many rows the `notes` table holds.
func noteCount(_ database: Database) async throws -> Int {
    try await database.withConnection { db in
        try await db.raw("SELECT COUNT(*) AS n FROM notes").first(decodingColumn: "n", as: Int.self) ?? -1
    }
}
